import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { allStateTexts, STATES } from './report-score-states';

/**
 * Writes what a person reads in each state of the component, as the Jest tests render it, to
 * test-artifacts/lwc-state-texts.json: test/component-preview.test.ts checks that the demo's preview page
 * shows the same text for every state.
 */
const OUT = join(__dirname, '..', '..', 'test-artifacts', 'lwc-state-texts.json');

it('writes every state text for the preview comparison', async () => {
  const texts = await allStateTexts();
  expect(Object.keys(texts)).toEqual(Object.keys(STATES));
  mkdirSync(join(OUT, '..'), { recursive: true });
  writeFileSync(OUT, `${JSON.stringify(texts, null, 2)}\n`);
});
