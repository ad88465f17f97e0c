import { postgresBackend } from './support/backends.js';
import { evidenceContentsSuite } from './support/evidence-contents-suite.js';

/** The PostgreSQL half of evidence-contents.test.ts (skipped when WITNESS_TEST_PG_URL is unset). */
evidenceContentsSuite(postgresBackend);
