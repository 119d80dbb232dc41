import { createRenderer, type RenderedChildNode, RenderedNodeType } from '@hubspot/ui-extensions/testing';
import { CARD_SAMPLES, type CardSampleName } from './card-samples.js';
import { type CardState, CardView } from './ReportCard.js';

/**
 * The card's states as plain text and as simple HTML, drawn by HubSpot's own test renderer from the same
 * component the project ships: for a preview page (the admin's, or README pictures) and for tests that read
 * what a seller would see. Not part of the HubSpot project.
 */

/** One visible piece of the card: a line of text, and the HTML element that shows it. */
interface Piece {
  text: string;
  html: string;
}

function escapeHtml(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
}

function textOf(node: RenderedChildNode): string {
  if (node.nodeType === RenderedNodeType.Text) return node.text;
  return node.childNodes.map(textOf).join('');
}

function prop(node: { props: object }, name: string): unknown {
  return (node.props as Record<string, unknown>)[name];
}

function str(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

function piecesOf(node: RenderedChildNode): Piece[] {
  if (node.nodeType === RenderedNodeType.Text) {
    return node.text.trim() ? [{ text: node.text, html: `<p>${escapeHtml(node.text)}</p>` }] : [];
  }
  const text = textOf(node);
  switch (node.name) {
    case 'Heading':
      return [{ text, html: `<h3>${escapeHtml(text)}</h3>` }];
    case 'Text':
      return [{ text, html: `<p>${escapeHtml(text)}</p>` }];
    case 'StatusTag':
      return [{ text: `[${text}]`, html: `<span class="tag">${escapeHtml(text)}</span>` }];
    case 'LoadingSpinner': {
      const label = str(prop(node, 'label'));
      return [{ text: label, html: `<p class="loading">${escapeHtml(label)}</p>` }];
    }
    case 'ProgressBar': {
      const title = str(prop(node, 'title'));
      const value = Number(prop(node, 'value') ?? 0);
      const max = Number(prop(node, 'maxValue') ?? 100);
      const description = str(prop(node, 'valueDescription'));
      return [
        {
          text: `${title}: ${description}`,
          html: `<label>${escapeHtml(title)} <meter min="0" max="${max}" value="${value}"></meter> ${escapeHtml(description)}</label>`,
        },
      ];
    }
    case 'Alert': {
      const title = str(prop(node, 'title'));
      return [
        {
          text: `${title}: ${text}`,
          html: `<div class="alert alert-${escapeHtml(str(prop(node, 'variant')))}"><strong>${escapeHtml(title)}</strong> ${escapeHtml(text)}</div>`,
        },
      ];
    }
    case 'Link': {
      const href = str(prop(node, 'href'));
      return [{ text: `${text} <${href}>`, html: `<a href="${escapeHtml(href)}">${escapeHtml(text)}</a>` }];
    }
    case 'Button': {
      const disabled = prop(node, 'disabled') === true;
      return [
        {
          text: `[${text}]${disabled ? ' (disabled)' : ''}`,
          html: `<button${disabled ? ' disabled' : ''}>${escapeHtml(text)}</button>`,
        },
      ];
    }
    case 'ToggleGroup': {
      const label = str(prop(node, 'label'));
      const value = str(prop(node, 'value'));
      const options = prop(node, 'options');
      const list = Array.isArray(options)
        ? (options as { label: string; value: string; description?: string }[])
        : [];
      return [
        { text: label, html: `<fieldset><legend>${escapeHtml(label)}</legend>` },
        ...list.map((o) => ({
          text: `${o.value === value ? '(x)' : '( )'} ${o.label} — ${o.description ?? ''}`,
          html: `<label><input type="radio" name="candidate"${o.value === value ? ' checked' : ''}> ${escapeHtml(o.label)} <small>${escapeHtml(o.description ?? '')}</small></label>`,
        })),
        { text: '', html: '</fieldset>' },
      ].filter((p) => p.text !== '' || p.html !== '');
    }
    case 'Divider':
      return [{ text: '—', html: '<hr>' }];
    default:
      return node.childNodes.flatMap(piecesOf);
  }
}

function render(state: CardState): Piece[] {
  const root = createRenderer('crm.record.tab').render(<CardView state={state} />);
  return root.childNodes.flatMap(piecesOf);
}

/** What a seller reads on the card in one state, one line per visible piece. */
export function cardStateText(state: CardState): string {
  return render(state)
    .map((p) => p.text)
    .filter((line) => line !== '')
    .join('\n');
}

/** The same state as a simple HTML fragment (for a preview page; not HubSpot's own look). */
export function cardStateHtml(state: CardState): string {
  // One piece a line: side-by-side pieces (two buttons) stay apart in the page's text, as they are on the card.
  return `<section class="report-card">\n${render(state)
    .map((p) => p.html)
    .join('\n')}\n</section>`;
}

/** Every sample state's text, by name. */
export function cardPreviewTexts(): Record<CardSampleName, string> {
  const out = {} as Record<CardSampleName, string>;
  for (const [name, state] of Object.entries(CARD_SAMPLES) as [CardSampleName, CardState][]) {
    out[name] = cardStateText(state);
  }
  return out;
}
