import { postgresBackend } from './support/backends.js';
import { scorerWithMemorySuite } from './support/scorer-with-memory-suite.js';

/** The PostgreSQL half of scorer-with-memory.test.ts (skipped when WITNESS_TEST_PG_URL is unset). */
scorerWithMemorySuite(postgresBackend);
