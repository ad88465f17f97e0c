import '../sources/local-file/acquire-worker.js';

/**
 * The CLI bundle's acquisition worker (scripts/bundle-cli.ts emits it as one CommonJS file,
 * `dist/cli/acquire-worker.cjs`, and points the bundled pool at it): the library's worker, unchanged.
 * `witness score` creates it before it loads the command (src/cli/main.ts, through the pool's `prewarm`),
 * and a thread created that way loads and probes the openat2 seam at once (`probeAtStart` in
 * acquire-worker.ts), while the main thread is still loading, instead of after the job has been posted.
 */
