import { sqliteBackend } from './support/backends.js';
import { scorerWithMemorySuite } from './support/scorer-with-memory-suite.js';

scorerWithMemorySuite(sqliteBackend);
