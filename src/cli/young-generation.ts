import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * Keeps V8's young generation at `semiSpaceMB` semi-spaces (two of them, so twice that of RSS) for the life of
 * the process; by default at the size V8 first made them (0.5 MB on Node 20).
 *
 * V8 doubles the semi-spaces whenever the bytes that survived scavenges since the last doubling exceed their
 * size. A feed always has a few hundred operations in flight, so over a long run that happens every time, up
 * to Node's ceiling (16 MB on Node 20 and 22, 32 MB on 24). Held at 8 MB, a 200,000-document feed peaked 12 MB
 * lower than at the ceiling; held at their first size, 14 MB lower again (96 MB against 110), at 0.92 of the CPU
 * per document (`benchmarks/feed/null-endpoint.ts --base 0bf9c40 --only h2c`, 3 rounds, the null endpoint).
 *
 * The ceiling itself (`--max-semi-space-size`) is fixed when the heap is made, so it would have to be a
 * command-line flag (`v8.setFlagsFromString` at start changes nothing); `#!/usr/bin/env -S node ...` is not
 * understood by busybox (Alpine images). The growth factor, though, is read at each doubling: at or below the size
 * the semi-spaces have now it is set to 1 at once; above it, it stays 2 until they reach the size and is set to 1
 * then. A poll, not a GC callback (JavaScript has none that runs inside the collection): growth takes many
 * scavenges, and the poll is one cheap call every 100 ms. Scavenges between two polls can still double them past
 * the size asked for (seen in CI: 4 MB for 2); the next poll stops the growth there.
 *
 * For the CLI only: V8 flags are the process's, which the CLI owns and a library caller does not. And for a
 * feed on one thread only: the flag holds worker threads' young generations too, at whatever size they have.
 */
export function holdYoungGeneration(semiSpaceMB = 0, everyMs = 100): void {
  let factor = 2;
  /** Sets the growth factor the semi-spaces' size calls for; false where it cannot be read or set (stop polling). */
  const steer = (): boolean => {
    const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (newSpace === undefined) return false;
    const wanted = newSpace.space_size / 2 >= semiSpaceMB * 1024 * 1024 ? 1 : 2;
    if (wanted === factor) return true;
    try {
      setFlagsFromString(`--semi-space-growth-factor=${wanted}`);
      factor = wanted;
      return true;
    } catch {
      // A V8 that freezes its flags after start: the young generation grows as V8 chooses.
      return false;
    }
  };
  // Already at the size: held from here, nothing to watch.
  if (!steer() || factor === 1) return;
  const timer = setInterval(() => {
    if (!steer()) clearInterval(timer);
  }, everyMs);
  timer.unref();
}
