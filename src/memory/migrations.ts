import { type Kysely, sql, type Transaction } from 'kysely';
import { SchemaTooNewError } from '../errors.js';
import { backfillAttemptFacts } from './attempt-facts.js';
import { upgradeStoredAttackResults } from './legacy-attack-results.js';
import { splitStoredRecords } from './record-parts.js';
import type { Tables } from './tables.js';

/**
 * Versioned, in-code migrations (internal). `openMemory` applies the missing ones in one transaction; a
 * database whose recorded version is higher than {@link MEMORY_SCHEMA_VERSION} was written by a newer
 * Witness and is refused with {@link SchemaTooNewError} before anything is written to it.
 *
 * Both backends run the same table definitions. The differences: on PostgreSQL, text keys and timestamps use
 * the "C" collation so rows sort byte-wise exactly as on SQLite (exports are then identical), and the
 * immutability triggers are PL/pgSQL functions instead of SQLite's RAISE(ABORT).
 */

export type Backend = 'sqlite' | 'postgres';

/** Message prefix (SQLite) and SQLSTATE (PostgreSQL) of the immutability triggers. */
export const IMMUTABLE_MESSAGE_PREFIX = 'witness_immutable';
export const IMMUTABLE_SQLSTATE = 'WI001';

/** Serializes concurrent openers of one PostgreSQL database (an arbitrary, fixed advisory lock key). */
const MIGRATION_LOCK_KEY = 0x57_49_54_4e; // "WITN"

/** A step is a SQL statement, or a data step run in the migration's transaction. */
type MigrationStep = string | ((trx: Transaction<Tables>) => Promise<void>);

interface Migration {
  version: number;
  description: string;
  steps(backend: Backend): MigrationStep[];
}

const MIGRATIONS: readonly Migration[] = [
  { version: 1, description: 'conversations, evidence, scores, attack results', steps: initialSchema },
  { version: 2, description: 'campaign runs in their own table; attack results immutable', steps: runsTable },
  { version: 3, description: "attack results carry the user's task outcome", steps: taskOutcomeColumn },
  { version: 4, description: 'evidence content stored once per distinct content', steps: evidenceContents },
  {
    version: 5,
    description: 'attempt facts: what the viewer and the report count and page by',
    steps: attemptFacts,
  },
  { version: 6, description: 'parts of records stored once per distinct JSON', steps: recordParts },
];

export const MEMORY_SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the database to {@link MEMORY_SCHEMA_VERSION} (tests of the migrations stop earlier with
 * `upTo`); returns the version found before.
 */
export async function migrate(
  db: Kysely<Tables>,
  backend: Backend,
  now: () => string,
  upTo: number = MEMORY_SCHEMA_VERSION,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    if (backend === 'postgres') await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(trx);
    await sql`create table if not exists witness_schema (
      id integer primary key check (id = 1),
      version integer not null,
      migrated_at text not null
    )`.execute(trx);
    const row = await trx
      .selectFrom('witness_schema')
      .select('version')
      .where('id', '=', 1)
      .executeTakeFirst();
    const found = row?.version ?? 0;
    if (found > MEMORY_SCHEMA_VERSION) {
      throw new SchemaTooNewError(
        `the database was written by a newer Witness (memory schema version ${found}; this version reads up to ${MEMORY_SCHEMA_VERSION}); upgrade Witness to open it, or use another database`,
        found,
        MEMORY_SCHEMA_VERSION,
      );
    }
    for (const migration of MIGRATIONS) {
      if (migration.version <= found || migration.version > upTo) continue;
      for (const step of migration.steps(backend)) {
        if (typeof step === 'string') await sql.raw(step).execute(trx);
        else await step(trx);
      }
    }
    const reached = Math.max(found, Math.min(upTo, MEMORY_SCHEMA_VERSION));
    if (found < reached) {
      await trx
        .insertInto('witness_schema')
        .values({ id: 1, version: reached, migrated_at: now() })
        .onConflict((oc) => oc.column('id').doUpdateSet({ version: reached, migrated_at: now() }))
        .execute();
    }
    return found;
  });
}

function initialSchema(backend: Backend): string[] {
  // Keys and timestamps sort byte-wise on both backends.
  const key = backend === 'postgres' ? 'text collate "C"' : 'text';
  const tables = [
    `create table conversations (
      id ${key} primary key,
      created_at ${key} not null,
      record_json text not null
    )`,
    `create table message_pieces (
      id ${key} primary key,
      conversation_id ${key} not null references conversations (id),
      turn integer not null check (turn >= 0),
      sequence integer not null check (sequence >= 0),
      role text not null,
      created_at ${key} not null,
      record_json text not null,
      unique (conversation_id, turn, sequence)
    )`,
    `create table observations (
      id ${key} primary key,
      source_hash text not null,
      acquisition text not null,
      uri text not null,
      match text not null,
      observed_at ${key} not null,
      record_json text not null
    )`,
    `create table observation_message_pieces (
      observation_id ${key} not null references observations (id),
      position integer not null,
      piece_id ${key} not null references message_pieces (id),
      primary key (observation_id, position)
    )`,
    `create table scores (
      id ${key} primary key,
      status text not null,
      value integer check (value in (0, 1)),
      scorable_type text not null,
      scorer_hash text not null,
      message_piece_id ${key} references message_pieces (id),
      created_at ${key} not null,
      record_json text not null
    )`,
    `create table score_observations (
      score_id ${key} not null references scores (id),
      position integer not null,
      observation_id ${key} not null references observations (id),
      primary key (score_id, position)
    )`,
    `create table score_message_pieces (
      score_id ${key} not null references scores (id),
      position integer not null,
      piece_id ${key} not null references message_pieces (id),
      primary key (score_id, position)
    )`,
    `create table attack_results (
      id ${key} primary key,
      campaign text not null,
      attack text not null,
      attempt integer not null,
      conversation_id ${key} not null references conversations (id),
      outcome text not null,
      score_id ${key} references scores (id),
      created_at ${key} not null,
      record_json text not null
    )`,
    'create index message_pieces_by_turn on message_pieces (conversation_id, turn)',
    'create index observation_message_pieces_by_piece on observation_message_pieces (piece_id)',
    'create index scores_by_time on scores (created_at, id)',
    'create index score_observations_by_observation on score_observations (observation_id)',
    'create index score_message_pieces_by_piece on score_message_pieces (piece_id)',
    'create index attack_results_by_attack on attack_results (campaign, attack)',
    'create index attack_results_by_time on attack_results (created_at, id)',
  ];
  return [...tables, ...immutabilityTriggers(backend, APPEND_ONLY_TABLES)];
}

/**
 * Version 2: runs get their own table and each attack result names its run (`run_id`); results written by
 * version 1 carried the run, transcript and times in `metadata` and are rewritten into the typed fields
 * (before the new triggers make them immutable). Attack results become append-only like the evidence.
 */
function runsTable(backend: Backend): MigrationStep[] {
  const key = backend === 'postgres' ? 'text collate "C"' : 'text';
  return [
    `create table runs (
      id ${key} primary key,
      campaign text not null,
      started_at ${key} not null,
      record_json text not null
    )`,
    `alter table attack_results add column run_id ${key} references runs (id)`,
    'create index runs_by_time on runs (started_at, id)',
    'create index attack_results_by_run on attack_results (run_id)',
    upgradeStoredAttackResults,
    ...immutabilityTriggers(backend, ['runs', 'attack_results'], false),
  ];
}

/**
 * Version 3: an attack result carries the outcome of the user's task (SPEC §16) in its own column, beside
 * the attack's, so utility can be counted without parsing every record; null for results without a task
 * (all of those stored before). Adding a column changes no stored row, so the immutability triggers stay.
 */
function taskOutcomeColumn(): MigrationStep[] {
  return [
    `alter table attack_results add column task_outcome text
       check (task_outcome is null or task_outcome in ('success', 'failure', 'undetermined'))`,
  ];
}

/**
 * Version 4: the texts observations retain are stored once per distinct content, as bytes
 * (evidence-contents.ts). Observations stored before keep their texts inline and are read as they are;
 * nothing stored is rewritten. Both tables are append-only like the evidence they belong to.
 */
function evidenceContents(backend: Backend): MigrationStep[] {
  const key = backend === 'postgres' ? 'text collate "C"' : 'text';
  const bytes = backend === 'postgres' ? 'bytea' : 'blob';
  return [
    `create table evidence_contents (
      sha256 ${key} primary key check (length(sha256) = 64),
      bytes ${bytes} not null
    )`,
    `create table observation_contents (
      observation_id ${key} not null references observations (id),
      entry_index integer not null check (entry_index >= 0),
      content_sha256 ${key} not null references evidence_contents (sha256),
      primary key (observation_id, entry_index)
    )`,
    ...immutabilityTriggers(backend, ['evidence_contents', 'observation_contents'], false),
  ];
}

/**
 * Version 5: narrow facts per attempt, their gap codes and each run's attack order (attempt-facts.ts),
 * indexed for what the viewer and the report ask of a run of a hundred thousand attempts — counts per
 * attack, outcome, task outcome and chain, a page of attempts in the run's order or by outcome, surface,
 * gaps or finish time (keyset), the attempts with one gap code, two runs paired by attack, attempt and
 * round — so none of them loads the attempts. Filled for what was stored before. Like the records they are
 * derived from, they never change: immutable by the same triggers.
 */
function attemptFacts(backend: Backend): MigrationStep[] {
  const key = backend === 'postgres' ? 'text collate "C"' : 'text';
  return [
    `create table run_attacks (
      run_id ${key} not null references runs (id),
      position integer not null,
      attack ${key} not null,
      control integer not null check (control in (0, 1)),
      surface ${key} not null,
      primary key (run_id, position)
    )`,
    'create index run_attacks_by_attack on run_attacks (run_id, attack)',
    `create table attempt_facts (
      result_id ${key} primary key references attack_results (id),
      run_id ${key} not null references runs (id),
      position integer not null,
      attack ${key} not null,
      attempt integer not null,
      chain ${key},
      round integer not null,
      outcome text not null,
      outcome_rank integer not null,
      control integer not null check (control in (0, 1)),
      surface ${key} not null,
      task_outcome text,
      finished_at ${key} not null,
      containment text,
      gap_count integer not null
    )`,
    `create table attempt_gaps (
      result_id ${key} not null references attempt_facts (result_id),
      run_id ${key} not null references runs (id),
      reason ${key} not null,
      primary key (result_id, reason)
    )`,
    'create index attempt_facts_by_position on attempt_facts (run_id, position, attempt, round, result_id)',
    'create index attempt_facts_by_outcome on attempt_facts (run_id, outcome_rank, position, attempt, round, result_id)',
    'create index attempt_facts_by_finish on attempt_facts (run_id, finished_at, result_id)',
    'create index attempt_facts_by_attempt on attempt_facts (run_id, attempt, position, round, result_id)',
    'create index attempt_facts_by_attack on attempt_facts (run_id, attack, attempt, round)',
    'create index attempt_facts_by_chain on attempt_facts (run_id, chain, round)',
    'create index attempt_gaps_by_reason on attempt_gaps (run_id, reason, result_id)',
    backfillAttemptFacts,
    ...immutabilityTriggers(backend, ['run_attacks', 'attempt_facts', 'attempt_gaps'], false),
  ];
}

/**
 * Version 6: the parts of attack results, scores and observations that repeat from attempt to attempt
 * are stored once per distinct JSON text (record-parts.ts). The records stored before are rewritten the
 * same way, so an existing memory shrinks too (SQLite reuses the freed pages; `VACUUM` returns them to
 * the file system). Only here may those rows change: their immutability triggers are lifted for the
 * rewrite, which leaves every record reading back exactly as it was, and put back at once.
 */
function recordParts(backend: Backend): MigrationStep[] {
  const key = backend === 'postgres' ? 'text collate "C"' : 'text';
  const id =
    backend === 'postgres' ? 'integer generated by default as identity primary key' : 'integer primary key';
  const rewritten = ['observations', 'scores', 'attack_results'];
  const lift =
    backend === 'postgres'
      ? rewritten.map((table) => `alter table ${table} disable trigger ${table}_immutable`)
      : rewritten.map((table) => `drop trigger ${table}_no_update`);
  const restore =
    backend === 'postgres'
      ? rewritten.map((table) => `alter table ${table} enable trigger ${table}_immutable`)
      : immutabilityTriggers(backend, rewritten, false).filter((statement) =>
          /^create trigger \w+_no_update /.test(statement),
        );
  return [
    `create table record_parts (
      id ${id},
      sha256 ${key} not null unique check (length(sha256) = 64),
      json text not null
    )`,
    ...rewritten.map((table) => `alter table ${table} add column parts text`),
    ...lift,
    splitStoredRecords,
    ...restore,
    ...immutabilityTriggers(backend, ['record_parts'], false),
  ];
}

/** Tables whose rows never change once written: the evidence chain. */
const APPEND_ONLY_TABLES = [
  'observations',
  'observation_message_pieces',
  'scores',
  'score_observations',
  'score_message_pieces',
] as const;

/** A piece is frozen once an observation or a score refers to it. */
const PIECE_REFERENCED =
  'exists (select 1 from observation_message_pieces where piece_id = old.id) or exists (select 1 from score_message_pieces where piece_id = old.id)';

function immutabilityTriggers(backend: Backend, tables: readonly string[], withPieceGuard = true): string[] {
  if (backend === 'sqlite') {
    const statements: string[] = [];
    for (const table of tables) {
      for (const operation of ['update', 'delete']) {
        statements.push(
          `create trigger ${table}_no_${operation} before ${operation} on ${table}
           begin select raise(abort, '${IMMUTABLE_MESSAGE_PREFIX}: ${table} rows cannot be changed once stored'); end`,
        );
      }
    }
    for (const operation of withPieceGuard ? ['update', 'delete'] : []) {
      statements.push(
        `create trigger message_pieces_referenced_no_${operation} before ${operation} on message_pieces
         when ${PIECE_REFERENCED}
         begin select raise(abort, '${IMMUTABLE_MESSAGE_PREFIX}: a message piece cannot be changed once an observation or a score refers to it'); end`,
      );
    }
    return statements;
  }
  const statements: string[] = [];
  if (withPieceGuard)
    statements.push(
      `create function witness_reject_change() returns trigger language plpgsql as $$
     begin
       raise exception '${IMMUTABLE_MESSAGE_PREFIX}: % rows cannot be changed once stored', tg_table_name
         using errcode = '${IMMUTABLE_SQLSTATE}';
     end $$`,
      `create function witness_reject_referenced_piece_change() returns trigger language plpgsql as $$
     begin
       if ${PIECE_REFERENCED} then
         raise exception '${IMMUTABLE_MESSAGE_PREFIX}: a message piece cannot be changed once an observation or a score refers to it'
           using errcode = '${IMMUTABLE_SQLSTATE}';
       end if;
       if tg_op = 'DELETE' then return old; end if;
       return new;
     end $$`,
      `create trigger message_pieces_referenced_immutable before update or delete on message_pieces
     for each row execute function witness_reject_referenced_piece_change()`,
      // TRUNCATE skips row triggers; refuse it on every table that holds evidence or that evidence refers to.
      `create trigger message_pieces_no_truncate before truncate on message_pieces
     for each statement execute function witness_reject_change()`,
    );
  for (const table of tables) {
    statements.push(
      `create trigger ${table}_immutable before update or delete on ${table}
       for each row execute function witness_reject_change()`,
      `create trigger ${table}_no_truncate before truncate on ${table}
       for each statement execute function witness_reject_change()`,
    );
  }
  return statements;
}
