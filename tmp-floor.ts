import { Pool } from 'undici';
const url = process.argv[2]!;
for (let r = 0; r < 3; r++) {
const pool = new Pool(url, { connections: 4 });
const c0 = process.cpuUsage(); const t = performance.now(); let bytes = 0;
await Promise.all([0, 1, 2, 3].map(async (sliceId) => {
  const res = await pool.request({ method: 'GET', path: `/document/v1/bench/music/docid/?stream=true&slices=4&sliceId=${sliceId}`, headers: { accept: 'application/jsonl' } });
  for await (const chunk of res.body) bytes += chunk.length;
}));
const c = process.cpuUsage(c0);
console.log('floor', ((performance.now() - t) / 1000).toFixed(2), 's', (bytes / 1e6).toFixed(0), 'MB cpu user', (c.user / 1e3).toFixed(0), 'sys', (c.system / 1e3).toFixed(0));
await pool.close();
}
