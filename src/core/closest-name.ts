/** Did-you-mean for a mistyped name (a command, a flag, a field of a schema): one rule for every message that suggests. */

/**
 * The name among `candidates` nearest to `word` when it is near enough to be a typo: a few letters off (more for a
 * longer word), or one of the two a prefix of the other (`--target-url` for `--target`); the nearest first.
 */
export function closestName(word: string, candidates: readonly string[]): string | undefined {
  const allowed = allowedEdits(word.length);
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(word, name);
    const prefix = Math.min(word.length, name.length) >= 3 && (name.startsWith(word) || word.startsWith(name));
    if (distance > allowed && !prefix) continue;
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  return best?.name;
}

/** Letters a word may be off by and still be a typo of a name: one in a short word, more in a longer. */
function allowedEdits(length: number): number {
  if (length <= 4) return 1;
  return length <= 8 ? 2 : 3;
}

/** Edits (insert, delete, replace, swap of two neighbours) from `a` to `b`: optimal string alignment distance. */
export function editDistance(a: string, b: string): number {
  // The first row and column are the distances from and to an empty prefix (one of i and j is 0: their sum).
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 || j === 0 ? i + j : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}
