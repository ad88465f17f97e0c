import { sqliteBackend } from './support/backends.js';
import { runQueriesSuite } from './support/run-queries-suite.js';

runQueriesSuite(sqliteBackend);
