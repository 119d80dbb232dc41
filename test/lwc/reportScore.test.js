import { getRecord } from 'lightning/uiRecordApi';
import { allStateTexts, RECORD_ID, renderState, STATES, stateText } from './report-score-states';

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

  it('linked: score and band, pillars as labelled bars, alert (first, as on the HubSpot card), verification, previous score, link, source', async () => {
    const element = await renderState('linked');
    expect(stateText(element)).toBe(
      [
        'Report',
        'Score 72.5 Strong',
        'Scored on Nov 2, 2026, 2:00 AM',
        'Team 80 weight 40%',
        'Market 70.5 weight 35%',
        'Product 64 weight 25%',
        'Active alert: High alert, score drop: Score fell — The score fell by 8 points (Nov 4, 2026, 1:00 AM)',
        'Verification: confirmed, verified score 71, on Nov 5, 2026, 7:30 AM.',
        'Previous score 80.5 (down); it changed with the scoring of Nov 2, 2026, 2:00 AM.',
        'Open the full report',
        'Linked automatically by the connector’s matching.',
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
      { text: 'Open the full report', href: 'https://reports.example.com/r/acme-corp' },
    ]);
  });

  it.each([
    ['linkedByPerson', 'Linked by hand: someone set the report slug on this company.'],
    ['linkedByAdmin', 'Linked by an admin of the report connector.'],
    ['linkedByRequest', 'Linked to the report that was requested for this company.'],
  ])('%s: says who made the link in words', async (name, words) => {
    const element = await renderState(name);
    expect(byId(element, 'source').textContent).toBe(words);
  });

  it('no verification: says so instead of a verdict', async () => {
    const element = await renderState('noVerification');
    expect(byId(element, 'verification').textContent).toBe(
      'This report is not verified: the score is the publisher’s own, not checked by a verifier.',
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
    expect(links(element)).toEqual([]);
    expect(byId(element, 'report-link').textContent).toBe(
      'The report address is not a web link, so it is not shown.',
    );
  });

  it.each([
    [
      'needsReview',
      'Needs review',
      'Several published reports could be this company, and none is clearly it. The score appears here once one is chosen.',
      'Your admin chooses the report in the report connector. If you know which it is, tell your admin.',
    ],
    [
      'noMatch',
      'No report',
      'No published report matches this company.',
      'To ask for a report for this company, tell your admin.',
    ],
    [
      'noMatchDecided',
      'No report',
      'Someone decided that no published report is this company, so the connector will not link one on its own.',
      'To ask for a report for this company, tell your admin.',
    ],
    [
      'notPublished',
      'Report not published',
      'The linked report is not published at the moment. The score comes back on its own when the report is published again.',
      null,
    ],
    [
      'requested',
      'Report requested',
      'A report was requested for this company. The record is linked and scored as soon as the report is published.',
      null,
    ],
    [
      'error',
      'Could not read the report',
      'The connector could not read the linked report the last time it tried. It tries again on the next sync; if this stays, ask your admin.',
      null,
    ],
    [
      'notSynced',
      'Not looked at yet',
      'The connector has not written this company yet. Its score appears after the next sync.',
      null,
    ],
  ])(
    '%s: a title, a sentence saying what it means, who acts, and no link a seller cannot open',
    async (name, title, sentence, nextStep) => {
      const element = await renderState(name);
      expect(stateText(element)).toBe(
        ['Report', title, sentence, ...(nextStep ? [nextStep] : [])].join('\n'),
      );
      expect(links(element)).toEqual([]);
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

  it('the connector address and installation id older pages set give no link to the admin page', async () => {
    const element = await renderState('linked');
    expect(element.connectorUrl).toMatch(/^https:/);
    expect(element.installationId).toMatch(/^salesforce-/);
    const hrefs = links(element).map((l) => l.href);
    expect(hrefs).toEqual(['https://reports.example.com/r/acme-corp']);
    expect(element.shadowRoot.innerHTML).not.toMatch(/\/admin|admin page/);
  });

  it('every state renders its own text', async () => {
    const texts = await allStateTexts();
    expect(Object.keys(texts)).toEqual(Object.keys(STATES));
    for (const text of Object.values(texts)) expect(text.split('\n').length).toBeGreaterThan(1);
    // States that differ in their record differ in what a person reads.
    expect(new Set(Object.values(texts)).size).toBe(Object.keys(STATES).length);
  });
});
