import { describeUnprivilegedReader } from '../support/unprivileged-reader-suite.js';

/** Every permission case of the adversarial corpus, run as uid 65534 (one of them runs in `npm test`). */
describeUnprivilegedReader({ cases: 'all' });
