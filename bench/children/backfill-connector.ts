/**
 * Child process of bench/backfill.ts: the connector side of one backfill, the pipeline or the naive loop, in
 * a process of its own so that its memory is measured from a clean start. Starting it prepares the backfill
 * (installation, fields, connections); the `run` call runs it and answers with what this process measured.
 */
import type { BackfillRunner, ConnectorSideConfig, RunResult } from '../support/backfill-setup.js';
import { prepareNaiveBackfill } from '../support/naive-backfill.js';
import { preparePipelineBackfill } from '../support/pipeline-backfill.js';
import { serveRpc } from '../support/rpc.js';

export type BackfillConnectorProtocol = {
  run: { args: null; result: RunResult };
};

await serveRpc<BackfillConnectorProtocol, ConnectorSideConfig, null>(async (config) => {
  const runner: BackfillRunner =
    config.way === 'pipeline' ? await preparePipelineBackfill(config) : await prepareNaiveBackfill(config);
  return { ready: null, handlers: { run: () => runner.run() }, close: () => runner.close() };
});
