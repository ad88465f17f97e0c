import { sqliteBackend } from './support/backends.js';
import { recordPartsSuite } from './support/record-parts-suite.js';

recordPartsSuite(sqliteBackend);
