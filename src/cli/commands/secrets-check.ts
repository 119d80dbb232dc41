import type { AppContext } from '../../app/context.js';
import type { Installation } from '../../installations/store.js';
import { DecryptionError } from '../../util/secretbox.js';

/**
 * Whether this process's ENCRYPTION_KEY opens an installation's stored secrets (its CRM tokens, its report
 * key): a read-only command run with another key than the server's would otherwise print "could not be
 * decrypted" somewhere in its output and exit 0. Null when they open (or none is stored), else the sentence
 * that says what to check.
 */
export async function unreadableSecrets(ctx: AppContext, installation: Installation): Promise<string | null> {
  try {
    await ctx.installations.getTokens(installation.id);
    await ctx.installations.getReportsApiKey(installation.id);
    return null;
  } catch (err) {
    if (!(err instanceof DecryptionError)) throw err;
    return `The stored secrets of installation ${installation.id} cannot be decrypted with this ENCRYPTION_KEY: check that ENCRYPTION_KEY (and REDIS_PREFIX) are the ones the server runs with, as in its .env.`;
  }
}
