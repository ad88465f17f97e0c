import { postgresBackend } from './support/backends.js';
import { runQueriesSuite } from './support/run-queries-suite.js';

/** The PostgreSQL half of run-queries.test.ts, with the heavy lane's few thousand attempts. */
process.env.WITNESS_TEST_FULL_SAMPLES = '1';
runQueriesSuite(postgresBackend);
