import { postgresBackend } from './support/backends.js';
import { memoryContractSuite } from './support/memory-contract-suite.js';

/** The PostgreSQL half of memory-contract.test.ts (skipped when WITNESS_TEST_PG_URL is unset). */
memoryContractSuite(postgresBackend);
