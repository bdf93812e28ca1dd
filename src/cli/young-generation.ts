import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * Keeps V8's young generation at `semiSpaceMB` semi-spaces (two of them, so twice that of RSS) for the life of
 * the process.
 *
 * V8 doubles the semi-spaces whenever the bytes that survived scavenges since the last doubling exceed their
 * size. A feed always has a few hundred operations in flight, so over a long run that happens every time, up
 * to Node's ceiling (16 MB on Node 20 and 22, 32 MB on 24): a 200,000-document feed peaked 12 MB higher than at
 * 8 MB, at no lower CPU per document (bench/feed/run.ts `memory`). Half the size again promotes more of what
 * is in flight to old space and costs more than it saves.
 *
 * The ceiling itself (`--max-semi-space-size`) is fixed when the heap is made, so it would have to be a
 * command-line flag; `#!/usr/bin/env -S node ...` is not understood by busybox (Alpine images). The growth
 * factor, though, is read at each doubling: it stays 2 below the size wanted and is set to 1 once there. A
 * poll, not a GC callback (JavaScript has none that runs inside the collection): growth takes many scavenges,
 * and the poll is one cheap call every 100 ms. Scavenges between two polls can still double them past the size
 * asked for (seen in CI: 4 MB for 2); the next poll stops the growth there.
 *
 * For the CLI only: V8 flags are the process's, which the CLI owns and a library caller does not. And for a
 * feed on one thread only: the flag holds worker threads' young generations too, at whatever size they have.
 */
export function holdYoungGeneration(semiSpaceMB = 8, everyMs = 100): void {
  let factor = 2;
  const timer = setInterval(() => {
    const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (newSpace === undefined) return stop();
    const wanted = newSpace.space_size / 2 >= semiSpaceMB * 1024 * 1024 ? 1 : 2;
    if (wanted === factor) return;
    try {
      setFlagsFromString(`--semi-space-growth-factor=${wanted}`);
      factor = wanted;
    } catch {
      // A V8 that freezes its flags after start: the young generation grows as V8 chooses.
      stop();
    }
  }, everyMs);
  timer.unref();
  function stop(): void {
    clearInterval(timer);
  }
}
