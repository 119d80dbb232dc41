import { getRecord } from 'lightning/uiRecordApi';
import {
  allStateTexts,
  CONNECTOR_URL,
  INSTALLATION_ID,
  RECORD_ID,
  renderState,
  STATES,
  stateText,
} from './report-score-states';

const ADMIN_RECORD = `${CONNECTOR_URL}/admin/installations/${INSTALLATION_ID}/records/${RECORD_ID}`;

function links(element) {
  return [...element.shadowRoot.querySelectorAll('a')].map((a) => ({
    text: a.textContent.trim(),
    href: a.getAttribute('href'),
  }));
}

function byId(element, id) {
  return element.shadowRoot.querySelector(`[data-id="${id}"]`);
}

afterEach(() => {
  while (document.body.firstChild) document.body.removeChild(document.body.firstChild);
  jest.clearAllMocks();
});

describe('c-report-score', () => {
  it('asks Lightning Data Service for every Report_* field of this Account, each optional', async () => {
    await renderState('linked');
    const config = getRecord.getLastConfig();
    expect(config.recordId).toBe(RECORD_ID);
    expect(config.fields).toBeUndefined();
    expect([...config.optionalFields].sort()).toEqual(
      [
        'Alert',
        'Alert_At',
        'Band',
        'Link_Source',
        'Match_Status',
        'Pillars',
        'Score',
        'Score_Previous',
        'Scored_At',
        'Slug',
        'Synced_At',
        'URL',
        'Verdict',
        'Verified_At',
        'Verified_Score',
      ]
        .map((f) => `Account.Report_${f}__c`)
        .sort(),
    );
  });

  it('linked: score and band, pillars as labelled bars, verification, previous score, alert, link, source', async () => {
    const element = await renderState('linked');
    expect(stateText(element)).toBe(
      [
        'Report',
        'Score 72.5 Strong',
        'Scored Nov 2, 2026, 2:00 AM',
        'Team 80 weight 40%',
        'Market 70.5 weight 35%',
        'Product 64 weight 25%',
        'Verified: confirmed (verified score 71), Nov 5, 2026, 7:30 AM.',
        'Previous score 80.5, changed with the scoring of Nov 2, 2026, 2:00 AM.',
        'Alert (Nov 4, 2026, 1:00 AM): High alert, score drop: Score fell — The score fell by 8 points',
        'Open the report',
        "Linked automatically by the connector's matching.",
        'Review this link (admin page)',
      ].join('\n'),
    );
    const bars = [...element.shadowRoot.querySelectorAll('li.pillar')];
    expect(bars.map((b) => b.getAttribute('aria-label'))).toEqual([
      'Team: 80, weight 40%',
      'Market: 70.5, weight 35%',
      'Product: 64, weight 25%',
    ]);
    expect(bars.map((b) => b.querySelector('.pillar-fill').getAttribute('style'))).toEqual([
      'width: 80%',
      'width: 70.5%',
      'width: 64%',
    ]);
    expect(byId(element, 'alert').getAttribute('role')).toBe('alert');
    expect(links(element)).toEqual([
      { text: 'Open the report', href: 'https://reports.example.com/r/acme-corp' },
      { text: 'Review this link (admin page)', href: ADMIN_RECORD },
    ]);
  });

  it.each([
    ['linkedByPerson', 'Linked by hand: someone set the report slug on this account.'],
    ['linkedByAdmin', "Linked by an admin on the connector's review page."],
    ['linkedByRequest', 'Linked to the report that was requested for this account.'],
  ])('%s: says who made the link in words', async (name, words) => {
    const element = await renderState(name);
    expect(byId(element, 'source').textContent).toBe(words);
  });

  it('no verification: says so instead of a verdict', async () => {
    const element = await renderState('noVerification');
    expect(byId(element, 'verification').textContent).toBe(
      "This report is not verified: the score is the publisher's own, not checked by a verifier.",
    );
  });

  it('no previous score: says this is the first score', async () => {
    const element = await renderState('noPreviousScore');
    expect(byId(element, 'previous').textContent).toBe(
      'No earlier score: this is the first score the record has had.',
    );
  });

  it('no alert: shows no alert line', async () => {
    const element = await renderState('noAlert');
    expect(byId(element, 'alert')).toBeNull();
  });

  it('a report address that is not http(s) never becomes a link', async () => {
    const element = await renderState('unsafeReportUrl');
    expect(links(element).map((l) => l.href)).toEqual([ADMIN_RECORD]);
    expect(byId(element, 'report-link').textContent).toBe(
      'The report address is not a web link, so it is not shown.',
    );
  });

  it.each([
    [
      'needsReview',
      'Needs review',
      "Several published reports could be this account, and none is clearly it. An admin chooses one, or none, on the connector's admin page, which lists the candidates; the score appears here once one is chosen.",
      'Choose the report (admin page)',
    ],
    [
      'noMatch',
      'No report',
      'No published report matches this account. An admin can link one by hand or request a report for it.',
      'Request a report (admin page)',
    ],
    [
      'noMatchDecided',
      'No report',
      'Someone decided that no published report is this account, so the connector will not link one on its own.',
      'Request a report (admin page)',
    ],
    [
      'notPublished',
      'Report not published',
      'The linked report (gone-corp) is not published, so its score is not shown. The score comes back when the report is published again; an admin can link another report meanwhile.',
      'Review the link (admin page)',
    ],
    [
      'requested',
      'Report requested',
      'A report was requested for this account. Its score appears here when the report is published; nothing is needed until then.',
      'See the request (admin page)',
    ],
    [
      'error',
      'Could not read the report',
      'The connector could not read the linked report at its last try. It tries again on its own; if this stays, an admin can look at the record.',
      'Look at the record (admin page)',
    ],
    [
      'notSynced',
      'Not looked at yet',
      'The connector has not linked this account to a report yet. It does so at its next sync; nothing is needed from you.',
      'Open the record (admin page)',
    ],
  ])(
    '%s: a sentence saying what it means, and the admin page for this record',
    async (name, title, sentence, action) => {
      const element = await renderState(name);
      expect(stateText(element)).toBe(['Report', title, sentence, action].join('\n'));
      expect(links(element)).toEqual([{ text: action, href: ADMIN_RECORD }]);
      expect(element.shadowRoot.querySelector('li.pillar')).toBeNull();
    },
  );

  it('without access to the fields: asks for Report_Viewer, and offers no action', async () => {
    const element = await renderState('noFieldAccess');
    expect(stateText(element)).toBe(
      [
        'Report',
        'You cannot see the report fields. Ask your Salesforce admin for the Report_Viewer permission set.',
      ].join('\n'),
    );
    expect(links(element)).toEqual([]);
  });

  it('when the record cannot be loaded: says so', async () => {
    const element = await renderState('loadFailed');
    expect(stateText(element)).toBe(
      [
        'Report',
        'The report fields could not be loaded. Reload the page; if this stays, tell your Salesforce admin.',
      ].join('\n'),
    );
  });

  it("without an installation id: links to the connector's admin page and says why not this record", async () => {
    const element = await renderState('noInstallationId');
    expect(links(element).at(-1)).toEqual({
      text: 'Review this link (admin page)',
      href: `${CONNECTOR_URL}/admin`,
    });
    expect(byId(element, 'admin-hint').textContent).toMatch(/no installation id set/);
  });

  it('a connector address that is not http(s) gives no admin link at all', async () => {
    const element = await renderState('unsafeConnectorUrl');
    expect(links(element)).toEqual([
      { text: 'Open the report', href: 'https://reports.example.com/r/acme-corp' },
    ]);
  });

  it('every state renders its own text', async () => {
    const texts = await allStateTexts();
    expect(Object.keys(texts)).toEqual(Object.keys(STATES));
    for (const text of Object.values(texts)) expect(text.split('\n').length).toBeGreaterThan(1);
    // States that differ in their record differ in what a person reads.
    expect(new Set(Object.values(texts)).size).toBe(Object.keys(STATES).length);
  });
});
