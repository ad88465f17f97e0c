import { postgresBackend } from './support/backends.js';
import { campaignRunsSuite } from './support/runs-suite.js';

/** The PostgreSQL half of runs.test.ts (skipped when WITNESS_TEST_PG_URL is unset). */
campaignRunsSuite(postgresBackend);
