import { html, type SafeHtml } from '../html.js';
import { layout, notice, problem } from './layout.js';

export function loginPage(o: { next: string; error?: string | null; notice?: string | null }): SafeHtml {
  return layout(
    { title: 'Log in' },
    html`<div class="login">
      <h1>Log in</h1>
      <p>Enter the admin token: the value of <code>ADMIN_TOKEN</code> in the connector's configuration.</p>
      ${notice(o.notice)}
      ${problem(o.error, 'login-error')}
      <form method="post" action="/admin/login" class="stack">
        <input type="hidden" name="next" value="${o.next}">
        <div class="field">
          <label for="token">Admin token</label>
          <input id="token" name="token" type="password" autocomplete="current-password" required
            ${o.error ? html`aria-invalid="true" aria-describedby="login-error"` : ''} autofocus>
        </div>
        <button type="submit">Log in</button>
      </form>
    </div>`,
  );
}
