import { postgresBackend } from './support/backends.js';
import { recordPartsSuite } from './support/record-parts-suite.js';

/** The PostgreSQL half of record-parts.test.ts (skipped when WITNESS_TEST_PG_URL is unset). */
recordPartsSuite(postgresBackend);
