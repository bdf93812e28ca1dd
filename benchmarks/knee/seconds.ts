import { existsSync, readFileSync, rmSync } from 'node:fs';

/**
 * A feed's seconds as its `--stats FILE.jsonl` recorded them (one `point` line a second: ok, status codes,
 * p99, the in-flight limit), read back for what the summary cannot say: the worst second at the start, and the
 * rate before, during and after a fault.
 */
export interface Second {
  /** The interval, epoch ms. */
  from: number;
  to: number;
  ok: number;
  p99Ms: number;
  inflightLimit: number;
}

/** The points of a stats file, which is removed once read; none when the run wrote none. */
export function takeSeconds(file: string): Second[] {
  if (!existsSync(file)) return [];
  try {
    const seconds: Second[] = [];
    for (const raw of readFileSync(file, 'utf8').split('\n')) {
      if (raw === '') continue;
      const p = JSON.parse(raw) as Record<string, any>;
      if (p.type !== 'point') continue;
      seconds.push({
        from: (p.t - p.dt) * 1000,
        to: p.t * 1000,
        ok: p.ok,
        p99Ms: p.p99Ms,
        inflightLimit: p.inflightLimit,
      });
    }
    return seconds;
  } finally {
    rmSync(file, { force: true });
  }
}

/** The worst p99 of the first `n` seconds that had answers (the start's spike, if any). */
export function startP99(seconds: Second[], n = 5): number {
  const answered = seconds.filter((s) => s.p99Ms > 0).slice(0, n);
  return answered.length > 0 ? Math.max(...answered.map((s) => s.p99Ms)) : Number.NaN;
}

/** Operations ok per second over the seconds that lie wholly within [from, to) (epoch ms); NaN where none do. */
export function rateWithin(seconds: Second[], from: number, to: number): number {
  const inside = seconds.filter((s) => s.from >= from && s.to <= to);
  const dt = inside.reduce((a, s) => a + (s.to - s.from), 0) / 1000;
  return dt > 0 ? inside.reduce((a, s) => a + s.ok, 0) / dt : Number.NaN;
}

/** The lowest in-flight limit the feed held within [from, to) (how far it followed a fault down). */
export function lowestLimitWithin(seconds: Second[], from: number, to: number): number {
  const inside = seconds.filter((s) => s.to > from && s.from < to).map((s) => s.inflightLimit);
  return inside.length > 0 ? Math.min(...inside) : Number.NaN;
}
