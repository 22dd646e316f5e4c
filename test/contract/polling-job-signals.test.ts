import { PollingJobSignals } from '../../functions/adapters/aws/polling-job-signals.js';
import { describeJobSignalsContract } from './job-signals.contract.js';

// The timer is the poll: in Lambda an emptied event loop would end the invocation mid-wait.
describeJobSignalsContract('PollingJobSignals', () => new PollingJobSignals(), { pendingWaitKeepsProcessAlive: true });
