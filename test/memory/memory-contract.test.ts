import { sqliteBackend } from './support/backends.js';
import { memoryContractSuite } from './support/memory-contract-suite.js';

memoryContractSuite(sqliteBackend);
