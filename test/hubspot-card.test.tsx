import {
  Alert,
  Button,
  Heading,
  Link,
  LoadingSpinner,
  ProgressBar,
  Text,
  ToggleGroup,
} from '@hubspot/ui-extensions';
import { createRenderer } from '@hubspot/ui-extensions/testing';
import { describe, expect, it, vi } from 'vitest';
import {
  CARD_LINK_SOURCES,
  CARD_MATCH_STATUSES,
  CARD_REQUEST_STATES,
  preselectedCandidate,
} from '../connectors/hubspot/card/ui/card-data.js';
import {
  cardPreviewTexts,
  cardStateHtml,
  cardStateText,
} from '../connectors/hubspot/card/ui/card-preview.js';
import { cardDataFromProperties } from '../connectors/hubspot/card/ui/card-record.js';
import { CARD_SAMPLES } from '../connectors/hubspot/card/ui/card-samples.js';
import {
  CARD_NEXT_STEPS,
  LINK_SOURCE_WORDS,
  NEVER_SYNCED_SENTENCE,
  NO_MATCH_DECIDED_SENTENCE,
  NO_PREVIOUS_SENTENCE,
  NO_VERIFICATION_SENTENCE,
  NOT_FOUND_SENTENCE,
  REFUSED_SENTENCE,
  REQUEST_STATE_WORDS,
  STATE_TITLES,
  STATUS_SENTENCES,
  UNREACHABLE_SENTENCE,
} from '../connectors/hubspot/card/ui/card-text.js';
import {
  type CardModal,
  type CardState,
  CardView,
  ReportCard,
} from '../connectors/hubspot/card/ui/ReportCard.js';
import { HUBSPOT_PROPERTY_NAMES } from '../connectors/hubspot/fields/field-names.js';
import { LINK_SOURCES, MATCH_STATUSES } from '../src/fields.js';
import { REQUEST_STATES } from '../src/requests/request-store.js';

/**
 * The HubSpot app card with HubSpot's own test renderer: every state the card can be in, what it says and
 * offers, and the card reading its record through a stand-in for HubSpot's property read and iframe modal.
 */

function render(state: CardState, props: Partial<Parameters<typeof CardView>[0]> = {}) {
  const renderer = createRenderer('crm.record.sidebar');
  renderer.render(<CardView state={state} {...props} />);
  return renderer;
}

/**
 * Picks a candidate as a person would. `trigger` types its argument as the handler itself
 * (@hubspot/ui-extensions 0.17.0) while it passes it to the handler at run time, hence the cast.
 */
function choose(group: { trigger(name: 'onChange', arg?: never): void }, value: string): void {
  group.trigger('onChange', value as never);
}

function texts(renderer: ReturnType<typeof render>): string[] {
  return renderer.findAll(Text).map((t) => t.text ?? '');
}

describe('the card in each state', () => {
  it('linked: score and band, pillars as labelled bars, verification, previous score, alert, link and its source', () => {
    const r = render(CARD_SAMPLES.linked);
    expect(r.find(ProgressBar, { title: 'Governance' }).props).toMatchObject({
      value: 80,
      maxValue: 100,
      valueDescription: '80 (40% of the score)',
    });
    expect(r.findAll(ProgressBar).map((p) => p.props.title)).toEqual([
      'Governance',
      'Operations',
      'Disclosure',
    ]);
    const text = cardStateText(CARD_SAMPLES.linked);
    expect(text).toContain('Score 72');
    expect(text).toContain('[Strong]');
    expect(r.findByTestId(Text, 'verification').text).toBe(
      'Verification: confirmed, verified score 71, on 5 Nov 2026.',
    );
    expect(r.findByTestId(Text, 'previous').text).toBe(
      'Previous score 84 (down); it changed with the scoring of 3 Nov 2026.',
    );
    expect(r.find(Alert).props.title).toBe('Active alert');
    expect(r.find(Alert).text).toContain('High alert, score drop');
    expect(r.find(Link).props.href).toBe('https://reports.example.com/r/northwind-traders');
    expect(r.findByTestId(Text, 'link-source').text).toBe(LINK_SOURCE_WORDS.auto);
    expect(r.maybeFind(Button)).toBeNull();
  });

  it('shows no link for a report address that is not http or https, and says who linked it', () => {
    const r = render(CARD_SAMPLES.linked_by_person_unsafe_link);
    expect(r.maybeFind(Link)).toBeNull();
    expect(r.findByTestId(Text, 'link-source').text).toBe(LINK_SOURCE_WORDS.person);
    expect(r.maybeFind(Alert)).toBeNull();
  });

  it('no verification and no previous score: a sentence each', () => {
    expect(render(CARD_SAMPLES.no_verification).findByTestId(Text, 'verification').text).toBe(
      NO_VERIFICATION_SENTENCE,
    );
    const r = render(CARD_SAMPLES.no_previous);
    expect(r.findByTestId(Text, 'previous').text).toBe(NO_PREVIOUS_SENTENCE);
    expect(r.findByTestId(Text, 'link-source').text).toBe(LINK_SOURCE_WORDS.admin);
  });

  it('needs_review: candidates with place, industry and score, "This one" and "None of these"; a clear best is pre-selected', () => {
    const decisions: unknown[] = [];
    const r = render(CARD_SAMPLES.needs_review, { onDecide: (d) => decisions.push(d) });
    expect(r.findByTestId(Text, 'status').text).toBe(STATUS_SENTENCES.needs_review);
    const group = r.find(ToggleGroup);
    expect(group.props.options).toEqual([
      { label: 'Acme GmbH', value: 'acme-gmbh', description: 'Germany · Manufacturing · score 64' },
      { label: 'Acme Ltd', value: 'acme-ltd', description: 'United Kingdom · Retail · score 58' },
    ]);
    expect(group.props.value).toBe('acme-gmbh');
    r.findByTestId(Button, 'accept').trigger('onClick');
    choose(group, 'acme-ltd');
    r.findByTestId(Button, 'accept').trigger('onClick');
    r.findByTestId(Button, 'reject').trigger('onClick');
    expect(decisions).toEqual([
      { action: 'accept', slug: 'acme-gmbh' },
      { action: 'accept', slug: 'acme-ltd' },
      { action: 'reject' },
    ]);
    expect(r.findByTestId(Button, 'accept').text).toBe('This one');
    expect(r.findByTestId(Button, 'reject').text).toBe('None of these');
  });

  it("needs_review: each candidate's reason from the matcher follows its facts; one kept without a reason shows none", () => {
    const sample = CARD_SAMPLES.needs_review;
    if (sample.kind !== 'data' || sample.data.review === null) throw new Error('the sample is a review');
    const [first, second] = sample.data.review.candidates;
    const state: CardState = {
      kind: 'data',
      data: {
        ...sample.data,
        review: {
          candidates: [
            { ...first!, why: "the report's description gives this as the company's former name" },
            second!,
          ],
        },
      },
    };
    expect(render(state).find(ToggleGroup).props.options).toEqual([
      {
        label: 'Acme GmbH',
        value: 'acme-gmbh',
        description:
          "Germany · Manufacturing · score 64 · the report's description gives this as the company's former name",
      },
      { label: 'Acme Ltd', value: 'acme-ltd', description: 'United Kingdom · Retail · score 58' },
    ]);
  });

  it('needs_review with tied top candidates: none is pre-selected and "This one" waits for a choice', () => {
    const decisions: unknown[] = [];
    const r = render(CARD_SAMPLES.needs_review_tied, { onDecide: (d) => decisions.push(d) });
    expect(r.find(ToggleGroup).props.value).toBe('');
    expect(r.findByTestId(Button, 'accept').props.disabled).toBe(true);
    expect(r.findByTestId(Text, 'tied').text).toMatch(/tied/);
    choose(r.find(ToggleGroup), 'acme-ag');
    expect(r.findByTestId(Button, 'accept').props.disabled).toBe(false);
    r.findByTestId(Button, 'accept').trigger('onClick');
    expect(decisions).toEqual([{ action: 'accept', slug: 'acme-ag' }]);
  });

  it('no_match: "Request a report"; after a request, its state in words', () => {
    let requested = 0;
    const r = render(CARD_SAMPLES.no_match, { onRequest: () => requested++ });
    expect(r.findByTestId(Text, 'status').text).toBe(STATUS_SENTENCES.no_match);
    const button = r.findByTestId(Button, 'request');
    expect(button.text).toBe('Request a report');
    button.trigger('onClick');
    expect(requested).toBe(1);
    const after = render(CARD_SAMPLES.no_match_requested);
    expect(after.findByTestId(Text, 'request-state').text).toBe(REQUEST_STATE_WORDS.cancelled);
    const pending = render({
      kind: 'data',
      data: {
        ...CARD_SAMPLES.no_match.data,
        request: { state: 'pending', requestedAt: '2026-11-01T00:00:00Z' },
      },
    });
    expect(pending.findByTestId(Text, 'request-state').text).toBe(REQUEST_STATE_WORDS.pending);
    expect(pending.maybeFindByTestId(Button, 'request')).toBeNull();
  });

  it('each waiting state has its title, what it means and what the seller can do here, in the shared words', () => {
    const review = render(CARD_SAMPLES.needs_review);
    expect(review.find(Heading).text).toBe(STATE_TITLES.needs_review);
    expect(review.findByTestId(Text, 'next-step').text).toBe(CARD_NEXT_STEPS.needs_review);
    const noMatch = render(CARD_SAMPLES.no_match);
    expect(noMatch.find(Heading).text).toBe(STATE_TITLES.no_match);
    expect(noMatch.findByTestId(Text, 'next-step').text).toBe(CARD_NEXT_STEPS.no_match);
    for (const name of ['requested', 'not_published', 'error'] as const) {
      expect(render(CARD_SAMPLES[name]).find(Heading).text).toBe(STATE_TITLES[name]);
    }
    expect(render(CARD_SAMPLES.never_synced).find(Heading).text).toBe(STATE_TITLES.never_synced);
  });

  it('no_match decided by a person or an admin says so, as the Salesforce component does', () => {
    for (const linkSource of ['person', 'admin'] as const) {
      const r = render({ kind: 'data', data: { ...CARD_SAMPLES.no_match.data, linkSource } });
      expect(r.findByTestId(Text, 'status').text).toBe(NO_MATCH_DECIDED_SENTENCE);
    }
  });

  it("no state links a seller to the connector's admin page", () => {
    for (const state of Object.values(CARD_SAMPLES)) {
      for (const link of render(state).findAll(Link))
        expect(String(link.props.href)).not.toMatch(/\/admin\b/);
      expect(cardStateText(state)).not.toMatch(/admin page|\/admin\b/);
    }
  });

  it.each([
    ['requested', STATUS_SENTENCES.requested],
    ['not_published', STATUS_SENTENCES.not_published],
    ['error', STATUS_SENTENCES.error],
    ['never_synced', NEVER_SYNCED_SENTENCE],
    ['unreachable', UNREACHABLE_SENTENCE],
    ['refused', REFUSED_SENTENCE],
    ['not_found', NOT_FOUND_SENTENCE],
  ] as const)('%s: one sentence saying what it means and what happens next', (name, sentence) => {
    const r = render(CARD_SAMPLES[name]);
    expect(r.findByTestId(Text, 'status').text).toBe(sentence);
    expect(r.maybeFind(Button)).toBeNull();
  });

  it('requested shows the request state; busy says when to try again; loading spins', () => {
    expect(render(CARD_SAMPLES.requested).findByTestId(Text, 'request-state').text).toBe(
      REQUEST_STATE_WORDS.pending,
    );
    expect(render(CARD_SAMPLES.busy).findByTestId(Text, 'status').text).toMatch(/Try again in 42 seconds/);
    expect(render(CARD_SAMPLES.loading).find(LoadingSpinner).props.label).toBe('Loading the report');
  });

  it('the preview text of every state is what the card renders, and its HTML escapes what it shows', () => {
    const previews = cardPreviewTexts();
    expect(Object.keys(previews).sort()).toEqual(Object.keys(CARD_SAMPLES).sort());
    for (const [name, state] of Object.entries(CARD_SAMPLES)) {
      expect(previews[name as keyof typeof previews], name).toBe(cardStateText(state));
      expect(previews[name as keyof typeof previews].length, name).toBeGreaterThan(0);
      const shown = texts(render(state));
      for (const line of shown) expect(previews[name as keyof typeof previews], name).toContain(line);
    }
    expect(cardStateHtml(CARD_SAMPLES.linked)).toContain('<meter min="0" max="100" value="80"></meter>');
    expect(cardStateHtml(CARD_SAMPLES.linked_by_person_unsafe_link)).not.toContain('javascript:');
  });
});

describe('card data shared with the connector', () => {
  it('lists the same statuses, link sources and request states as the connector', () => {
    expect([...CARD_MATCH_STATUSES]).toEqual([...MATCH_STATUSES]);
    expect([...CARD_LINK_SOURCES]).toEqual([...LINK_SOURCES]);
    expect([...CARD_REQUEST_STATES]).toEqual([...REQUEST_STATES]);
  });

  it('pre-selects only a candidate strictly ahead of the next', () => {
    const c = (slug: string, score: number | null) => ({
      slug,
      name: slug,
      place: null,
      industry: null,
      score,
    });
    expect(preselectedCandidate([c('a', 50), c('b', 70)])).toBe('b');
    expect(preselectedCandidate([c('a', 70), c('b', 70)])).toBeNull();
    expect(preselectedCandidate([c('a', null), c('b', null)])).toBeNull();
    expect(preselectedCandidate([c('a', 70)])).toBe('a');
    expect(preselectedCandidate([])).toBeNull();
  });
});

/** The card's record as HubSpot's property read answers it, and the modals the card asked HubSpot to open. */
function fakeHubSpot(properties: Record<string, string | null>, fail = false) {
  const reads: string[][] = [];
  const modals: { modal: CardModal; onClose?: () => void }[] = [];
  const readProperties = async (names: string[]) => {
    reads.push(names);
    if (fail) throw new Error('HubSpot could not read the record');
    return properties;
  };
  const openModal = (modal: CardModal, onClose?: () => void) => {
    modals.push({ modal, ...(onClose ? { onClose } : {}) });
  };
  return { readProperties, openModal, reads, modals };
}

describe("the card on a HubSpot record: reads through HubSpot, acts on the connector's sign-in page", () => {
  const APP = 'https://connector.example.com/';
  const P = HUBSPOT_PROPERTY_NAMES;

  it("reads the record's own properties through HubSpot and shows its report", async () => {
    const hs = fakeHubSpot({
      [P.matchStatus]: 'matched',
      [P.slug]: 'acme-gmbh',
      [P.score]: '80',
      [P.band]: 'A',
      [P.pillars]: 'Governance 80 (40%); Operations 66.5 (35%); Data 90 (25%)',
      [P.linkSource]: 'auto',
    });
    const r = createRenderer('crm.record.tab');
    r.render(<ReportCard companyId="1001" portalId="31337" appUrl={APP} {...hs} />);
    expect(r.maybeFind(LoadingSpinner)).not.toBeNull();
    await r.waitFor(() => expect(r.findAll(ProgressBar).length).toBe(3));
    expect(r.find(Heading).text).toBe('Score 80');
    expect([...hs.reads[0]!].sort()).toEqual(Object.values(HUBSPOT_PROPERTY_NAMES).sort());
    expect(hs.modals).toEqual([]);
  });

  it('a record waiting for review: "Choose the report" opens the sign-in page for this portal and company, and the card reads again when it closes', async () => {
    const hs = fakeHubSpot({ [P.matchStatus]: 'needs_review' });
    const r = createRenderer('crm.record.tab');
    r.render(<ReportCard companyId="1001" portalId="31337" appUrl={APP} {...hs} />);
    await r.waitFor(() => expect(r.findByTestId(Button, 'review')).toBeTruthy());
    expect(r.maybeFind(ToggleGroup)).toBeNull();
    r.findByTestId(Button, 'review').trigger('onClick');
    expect(hs.modals).toHaveLength(1);
    expect(hs.modals[0]!.modal.uri).toBe(
      'https://connector.example.com/oauth/hubspot-card/act?portalId=31337&companyId=1001',
    );
    expect(hs.reads).toHaveLength(1);
    hs.modals[0]!.onClose?.();
    // The same answer changes nothing on screen, so the renderer's own waitFor (which waits for a change) cannot see it.
    await vi.waitFor(() => expect(hs.reads).toHaveLength(2));
  });

  it('no match: "Request a report" opens the same page', async () => {
    const hs = fakeHubSpot({ [P.matchStatus]: 'no_match' });
    const r = createRenderer('crm.record.tab');
    r.render(<ReportCard companyId="7" portalId="31337" appUrl={APP} {...hs} />);
    await r.waitFor(() => expect(r.findByTestId(Button, 'request')).toBeTruthy());
    r.findByTestId(Button, 'request').trigger('onClick');
    expect(hs.modals.map((m) => m.modal.uri)).toEqual([
      'https://connector.example.com/oauth/hubspot-card/act?portalId=31337&companyId=7',
    ]);
  });

  it('a record the connector never wrote, and a read HubSpot could not do: the card says so', async () => {
    const never = fakeHubSpot({});
    const r = createRenderer('crm.record.tab');
    r.render(<ReportCard companyId="7" portalId="1" appUrl={APP} {...never} />);
    await r.waitFor(() => expect(r.findByTestId(Text, 'status').text).toBe(NEVER_SYNCED_SENTENCE));
    const failing = fakeHubSpot({}, true);
    const f = createRenderer('crm.record.tab');
    f.render(<ReportCard companyId="7" portalId="1" appUrl={APP} {...failing} />);
    await f.waitFor(() => expect(f.findByTestId(Text, 'status').text).toBe(UNREACHABLE_SENTENCE));
  });

  // The property names themselves are generated from the field table (test/hubspot-manifest.test.ts).
  it('reads a report link only if it is http or https, and a link source only if it knows it', () => {
    const data = cardDataFromProperties('1', {
      [P.matchStatus]: 'matched',
      [P.slug]: 'x',
      [P.reportUrl]: 'javascript:alert(1)',
      [P.linkSource]: 'nonsense',
    });
    expect(data.report?.url).toBeNull();
    expect(data.linkSource).toBeNull();
  });
});
