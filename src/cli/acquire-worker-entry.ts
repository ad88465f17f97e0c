import '../sources/local-file/acquire-worker.js';
import { chooseSurfaceFs } from '../sources/local-file/surface-fs-choice.js';

/**
 * The CLI bundle's acquisition worker (scripts/bundle-cli.ts emits it as one CommonJS file,
 * `dist/cli/acquire-worker.cjs`, and points the bundled pool at it). It is the library's worker plus one
 * step: right after the worker has attached its job handler, it loads and probes the openat2 seam
 * (koffi, its native module, the RESOLVE_BENEATH probe, the statx and getdents probes) — what the first
 * `auto` or `openat2` job would otherwise do first. `witness score` starts this worker before it loads
 * the command (src/cli/main.ts), so the probe runs while the main thread is still loading, instead of
 * after the job has been posted.
 *
 * Nothing about the result changes: the choice is the same per-thread, cached one the job makes
 * (surface-fs-choice.ts), and a job that arrives meanwhile waits in the port's queue until this returns.
 * A seam that cannot load is remembered as unavailable, exactly as the first job would find it. (A
 * worker that only ever gets `procfs` jobs has loaded koffi for nothing; the CLI asks for `auto`.)
 */
chooseSurfaceFs('auto');
