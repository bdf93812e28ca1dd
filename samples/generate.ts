/**
 * Writes the sample corpus in samples/ (deterministic, so the committed files never drift from this script):
 *   npx tsx samples/generate.ts
 * music.jsonl: plain ids (docid form); users.json: a JSON array, ids in the n= (number) and g= (group) forms;
 * updates.jsonl: updates, a conditional put and removes against both.
 */
import { writeFileSync } from 'node:fs';

let state = 0x9e3779b9;
function rand(): number {
  // xorshift32: deterministic across Node versions, unlike Math.random.
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return (state >>> 0) / 0x100000000;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));

const words = ['blue', 'night', 'river', 'fire', 'dream', 'city', 'light', 'storm', 'heart', 'road', 'summer', 'ghost', 'glass', 'echo', 'silver', 'wild', 'stone', 'ocean', 'neon', 'velvet', 'ça', 'måne', 'corazón', '夜'];
const artists = ['The Weekend Drivers', 'Nora Vale', 'Kite Parade', 'Los Faros', 'Aurora Finch', 'Mbeki & Sons', 'Tokyo Static', 'Hollow Pines', 'Ana Lúcia', 'Grey Harbour'];
const genres = ['rock', 'pop', 'jazz', 'folk', 'electronic', 'hip-hop', 'classical', 'metal', 'soul', 'ambient'];
const title = (): string => Array.from({ length: int(1, 4) }, () => pick(words)).join(' ').replace(/^./, (c) => c.toUpperCase());

const music: string[] = [];
for (let i = 0; i < 3000; i++) {
  const fields = {
    title: title(),
    artist: pick(artists),
    year: int(1960, 2025),
    duration: int(90, 600),
    genres: Array.from(new Set(Array.from({ length: int(1, 3) }, () => pick(genres)))),
    popularity: Math.round(rand() * 1000) / 10,
    ratings: Object.fromEntries(Array.from({ length: int(0, 3) }, () => [pick(['critic', 'fan', 'radio', 'press']), int(1, 5)])),
  };
  music.push(JSON.stringify({ put: `id:mynamespace:music::song-${String(i).padStart(5, '0')}`, fields }));
}
writeFileSync(new URL('./music.jsonl', import.meta.url), `${music.join('\n')}\n`);

const users: { put: string; fields: object }[] = [];
for (let i = 0; i < 1500; i++) {
  const name = `${pick(['Ada', 'Bo', 'Chen', 'Dara', 'Eli', 'Fatima', 'Gus', 'Hana', 'Ivo', 'Jun'])} ${pick(['Berg', 'Kaur', 'Lopez', 'Ng', 'Okafor', 'Petrov', 'Smith', 'Tanaka'])}`;
  const kv = i % 2 === 0 ? `n=${int(1, 500)}` : `g=${pick(['eu', 'us', 'apac', 'latam'])}`;
  users.push({
    put: `id:mynamespace:user:${kv}:user-${i}`,
    fields: {
      name,
      age: int(16, 90),
      email: `${name.toLowerCase().replace(/\W+/g, '.')}.${i}@example.com`,
      tags: Array.from(new Set(Array.from({ length: int(0, 4) }, () => pick(genres)))),
      scores: Object.fromEntries(Array.from({ length: int(1, 3) }, () => [pick(genres), int(1, 100)])),
      location: pick(['Oslo', 'Trondheim', 'Lagos', 'Lima', 'Osaka', 'Austin', 'Pune', 'Porto']),
    },
  });
}
writeFileSync(new URL('./users.json', import.meta.url), `[\n${users.map((u) => `  ${JSON.stringify(u)}`).join(',\n')}\n]\n`);

const updates = [
  { update: 'id:mynamespace:music::song-00000', fields: { popularity: { assign: 99.9 } } },
  { update: 'id:mynamespace:music::song-00001', fields: { genres: { add: ['live'] }, duration: { increment: 10 } } },
  { update: 'id:mynamespace:music::song-new-0', create: true, fields: { title: { assign: 'Created by update' }, year: { assign: 2026 } } },
  { put: 'id:mynamespace:music::song-00002', condition: 'music.year > 0', fields: { title: 'Rewritten', artist: 'Nora Vale', year: 2001, duration: 200, genres: ['pop'], popularity: 1.5, ratings: {} } },
  { remove: 'id:mynamespace:music::song-00003' },
  { remove: users[0]!.put },
  { update: users[1]!.put, fields: { age: { increment: 1 }, tags: { add: ['jazz'] } } },
];
writeFileSync(new URL('./updates.jsonl', import.meta.url), `${updates.map((u) => JSON.stringify(u)).join('\n')}\n`);
