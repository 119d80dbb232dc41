import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import type { ListingGuide } from '../src/crm/public-pages.js';
import { createPublicPagesRouter, type PublicPageCrm } from '../src/server/public-pages.js';

/**
 * The public setup and support pages are laid out from the providers' data alone, so a further CRM brings its
 * guide as a folder's data and the pages follow: each guided CRM gets its sections, one without a guide is
 * left out of the setup page, and every word a provider hands over is text, never markup.
 */

const APP_URL = 'https://connector.example.org';

function guide(name: string): ListingGuide {
  return {
    account: `${name} workspace`,
    summary: `The app keeps report scores on ${name} records.`,
    install: {
      alternative: `choose Add app in the ${name} directory`,
      signIn: [`Sign in to ${name}.`],
      consent: 'Accept the access the app asks for:',
      scopes: [{ scope: `${name.toLowerCase()}.records.write`, purpose: 'write the scores' }],
      optionalScopes: [{ scope: `${name.toLowerCase()}.notes.write`, when: 'if notes are on' }],
      after: ['You land on the installed page.'],
    },
    configure: [`Add the score panel to ${name} records.`],
    use: ['Type a <b>slug</b> into the slug field.'],
    uninstall: {
      steps: [`Remove the app in ${name} settings.`],
      consequences: `The fields stay in ${name}.`,
    },
    supportAccount: `${name} workspace (its id)`,
  };
}

const ALPHA: PublicPageCrm = {
  label: 'Alpha',
  accountNoun: 'workspace',
  installPath: '/oauth/alpha/install',
  listingGuide: guide('Alpha'),
};
const BETA: PublicPageCrm = {
  label: 'Beta',
  accountNoun: 'tenant',
  installPath: '/oauth/beta/install',
  listingGuide: guide('Beta'),
};
const GAMMA: PublicPageCrm = { label: 'Gamma', accountNoun: 'instance', installPath: '/oauth/gamma/install' };

async function pages(crms: readonly PublicPageCrm[]): Promise<{ setup: string; support: string }> {
  const web = express();
  web.use(createPublicPagesRouter(APP_URL, crms));
  const server = web.listen(0, '127.0.0.1');
  try {
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const read = async (path: string) => (await fetch(`${origin}${path}`)).text();
    return { setup: await read('/docs/setup'), support: await read('/support') };
  } finally {
    await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  }
}

describe('the public pages', () => {
  it('give each CRM with a guide its own sections, from its data, and leave one without a guide out', async () => {
    const { setup } = await pages([ALPHA, GAMMA, BETA]);
    expect(setup).toContain('<h1>Setting up Report scores for Alpha or Beta</h1>');
    for (const crm of ['Alpha', 'Beta']) {
      const lower = crm.toLowerCase();
      expect(setup).toContain(`<h2>${crm}</h2>`);
      expect(setup).toContain(`href="${APP_URL}/oauth/${lower}/install"`);
      expect(setup).toContain(`connect your ${crm} workspace`);
      expect(setup).toContain(`<code>${lower}.records.write</code>: write the scores`);
      expect(setup).toContain(`<code>${lower}.notes.write</code>, is asked for only if notes are on.`);
      expect(setup).toContain(`The fields stay in ${crm}. The service's own copy`);
    }
    expect(setup).not.toContain('Gamma');
    expect(setup).not.toContain('/oauth/gamma/');
  });

  it('escape what a provider hands over', async () => {
    const { setup } = await pages([ALPHA]);
    expect(setup).toContain('Type a &lt;b&gt;slug&lt;/b&gt; into the slug field.');
    expect(setup).not.toContain('<b>slug</b>');
    // One CRM: its sections are the page's own, without a heading of its name.
    expect(setup).not.toContain('<h2>Alpha</h2>');
    expect(setup).toContain('<h2>Install the app and connect your Alpha workspace</h2>');
  });

  it('name every CRM on the support page, by its guide or else by its label and account noun', async () => {
    const { support, setup } = await pages([ALPHA, GAMMA]);
    expect(support).toContain('Say which Alpha workspace (its id) or Gamma instance it is about');
    const none = await pages([GAMMA]);
    expect(none.setup).toContain('<h1>Setting up Report scores</h1>');
    expect(none.setup).toContain('href="/support"');
    expect(setup).not.toContain('Gamma');
  });
});
