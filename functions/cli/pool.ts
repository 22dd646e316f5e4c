/**
 * Runs `fn` over `items` with at most `limit` calls in flight (svc.yaml `parallel`, spec 8), keeping
 * results in input order. A call that throws stops the run (callers that must go on catch inside `fn`).
 */
export async function mapPool<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}
