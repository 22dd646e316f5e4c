import { InProcessJobSignals } from '../../functions/adapters/in-process-job-signals.js';
import { describeJobSignalsContract } from './job-signals.contract.js';

// Local shell: the timeout is a safety net only; a pending wait must not keep `svc` from exiting.
describeJobSignalsContract('InProcessJobSignals, local', () => new InProcessJobSignals({ holdProcess: false }), { pendingWaitKeepsProcessAlive: false });

// AWS shell: the timer is the poll; in Lambda an emptied event loop would end the invocation mid-wait.
describeJobSignalsContract('InProcessJobSignals, on Lambda', () => new InProcessJobSignals({ holdProcess: true }), { pendingWaitKeepsProcessAlive: true });
