import { sqliteBackend } from './support/backends.js';
import { evidenceContentsSuite } from './support/evidence-contents-suite.js';

evidenceContentsSuite(sqliteBackend);
