/** Resolves once `condition` holds, looking every few ms (a test bounds the wait with its own timeout). */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
