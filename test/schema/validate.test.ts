import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { validate } from '../../src/validate/validate.js';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import { deployPackage, cleanupTrees, writeTree } from '../deploy/fixtures.js';
import { runCommand } from '../support/run-command.js';
import { kindsPackage } from './fixtures.js';

/** `validate` and the simulator give the same verdict, line for line, from the same module. */

const ns = 'id:ns:kinds::';
const corpus = [
  { put: `${ns}1`, fields: { year: 2001, title: 'fine', big: 9007199254740993 } },
  { put: `${ns}2`, fields: { year: 'notanumber' } },
  { put: `${ns}3`, fields: { nosuchfield: 1 } },
  { update: `${ns}4`, create: true, fields: { title: { increment: 1 } } },
  { update: `${ns}5`, create: true, fields: { year: { assign: '2001' } } },
  { put: `${ns}6`, fields: { tags: 'x' } },
  { remove: `${ns}7` },
  { put: 'id:ns:house::8', fields: {} },
  { update: `${ns}9`, fields: { nosuchfield: { assign: 1 } } },
  { put: `${ns}10`, fields: { title: 'control \u0001 character' } },
  { put: `${ns}11`, fields: { emb: [1, 2] } },
  { put: `${ns}12`, fields: { ratings: [{ key: 'a' }] } },
]
  .map((o) => JSON.stringify(o))
  .join('\n');
const refusedLines = [2, 3, 4, 6, 8, 9, 10, 11, 12];

let sim: Simulator;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, configPort: 0 });
  dir = await writeTree({
    'app/services.xml': kindsPackage()['services.xml'],
    'app/schemas/kinds.sd': kindsPackage()['schemas/kinds.sd'],
    'corpus.jsonl': `${corpus}\n`,
  });
  await deployPackage(sim.configUrl!, kindsPackage());
});
afterAll(async () => {
  await sim.close();
  await cleanupTrees();
});

function reasons(file: string): { inputLine: number; status: number; message: string }[] {
  return readFileSync(`${file}.reasons.jsonl`, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .map(({ inputLine, status, message }) => ({ inputLine, status, message }))
    .sort((a, b) => a.inputLine - b.inputLine); // The feed writes failures as answers come.
}

describe('validate', () => {
  it('refuses the same lines with the same messages as the simulator fed with vespa-bulk feed', async () => {
    const fed = await runCommand([
      'feed',
      join(dir, 'corpus.jsonl'),
      '--target',
      sim.url,
      '--failures',
      join(dir, 'fed.jsonl'),
      '--quiet',
    ]);
    expect(fed.code, fed.stderr).toBe(1);
    const checked = await runCommand([
      'validate',
      join(dir, 'corpus.jsonl'),
      '--app',
      join(dir, 'app'),
      '--failures',
      join(dir, 'validated.jsonl'),
    ]);
    expect(checked.code, checked.stderr).toBe(1);
    const fromSimulator = reasons(join(dir, 'fed.jsonl'));
    const fromValidate = reasons(join(dir, 'validated.jsonl'));
    expect(fromSimulator.map((r) => r.inputLine)).toEqual(refusedLines);
    expect(fromValidate).toEqual(fromSimulator);
    // The failure file is feedable input: the refused operations, unchanged.
    expect(readFileSync(join(dir, 'validated.jsonl'), 'utf8').trim().split('\n')).toEqual(
      refusedLines.map((n) => corpus.split('\n')[n - 1]),
    );
    const summary = JSON.parse(checked.stdout);
    expect(summary).toMatchObject({
      'validator.operation.count': 12,
      'validator.ok.count': 3,
      'validator.error.count': 9,
      'validator.response.code.counts': { 400: 7, 500: 2 },
    });
    expect(
      summary['validator.error.reason.counts'][
        "In document '<id>': Could not parse field 'year' of type int: For input string: \"notanumber\""
      ],
    ).toBe(1);
  });

  it('reads input as feed does: a JSON array, .gz, several files; against the package the config server holds', async () => {
    const array = join(dir, 'array.json');
    writeFileSync(array, `[${corpus.split('\n').slice(0, 3).join(',\n')}]`);
    const gz = join(dir, 'corpus.jsonl.gz');
    writeFileSync(gz, gzipSync(`${corpus}\n`));
    const outcome = await validate([array, gz], { configUrl: sim.configUrl });
    expect(outcome.summary['validator.operation.count']).toBe(15);
    expect(outcome.summary['validator.error.count']).toBe(2 + refusedLines.length);
  });

  it('exits 0 when all pass, 2 for bad usage or an unreadable package', async () => {
    const good = join(dir, 'good.jsonl');
    writeFileSync(good, `${corpus.split('\n')[0]}\n`);
    const ok = await runCommand(['validate', good, '--app', join(dir, 'app')]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)['validator.ok.count']).toBe(1);
    const broken = await writeTree({ 'services.xml': '<services><container id="x"></services>' });
    const bad = await runCommand(['validate', good, '--app', broken]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/services.xml is not well-formed XML/);
    expect((await runCommand(['validate', good])).code).toBe(2);
    expect((await runCommand(['validate', good, '--app', join(dir, 'nothing-here')])).stderr).toMatch(/does not exist/);
  });
});
