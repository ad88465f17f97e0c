import { postgresBackend } from './support/backends.js';
import { schemaVersionSuite } from './support/schema-version-suite.js';

/** The PostgreSQL half of the schema version tests in open-memory.test.ts. */
schemaVersionSuite(postgresBackend);
