import { LocalJobSignals } from '../../functions/adapters/local/job-signals.js';
import { describeJobSignalsContract } from './job-signals.contract.js';

// The timeout is a safety net only: a pending wait must not keep `svc` from exiting.
describeJobSignalsContract('LocalJobSignals', () => new LocalJobSignals(), { pendingWaitKeepsProcessAlive: false });
