/**
 * A two-reader test compares each run with a one-reader reference; that comparison means something only
 * if the second reader really read files. A short walk (maxFiles) can end before the second thread takes a
 * batch on a loaded machine (seen in CI and under load here, four runs out of four): `more` is called for
 * further runs (it compares each with the reference itself), until one has a second reader that read a
 * batch, at most `max` times. Returns every run's count of the second reader's batches.
 */
export async function untilSecondReaderRead<R extends { result: { helperBatches?: number } }>(
  runs: R[],
  more: (attempt: number) => Promise<R>,
  max = 20,
): Promise<number[]> {
  const batches = () => runs.map((run) => run.result.helperBatches ?? 0);
  for (let attempt = 1; attempt <= max && batches().every((count) => count === 0); attempt++) {
    runs.push(await more(attempt));
  }
  return batches();
}
