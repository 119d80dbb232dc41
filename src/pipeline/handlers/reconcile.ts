import type { Pipeline } from '../pipeline.js';

/** `reconcile`: the scheduled sweep, a reconcile run for every connected installation (Pipeline.reconcileAll). */
export async function reconcile(p: Pipeline): Promise<void> {
  await p.reconcileAll();
}
