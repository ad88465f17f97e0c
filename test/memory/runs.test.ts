import { sqliteBackend } from './support/backends.js';
import { campaignRunsSuite } from './support/runs-suite.js';

campaignRunsSuite(sqliteBackend);
