// Concurrency helpers for independent Redis reads on a request's path.

/** Both results, fetched concurrently; on failure the first one's error wins, as if awaited in turn. */
export async function inOrder<A, B>(first: Promise<A>, second: Promise<B>): Promise<[A, B]> {
  const [a, b] = await Promise.allSettled([first, second]);
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  return [a.value, b.value];
}
