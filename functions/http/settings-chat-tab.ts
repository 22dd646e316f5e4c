import { html, type Markup } from './html.js';

/**
 * The Chat tab of the workspace settings page (README: Chat approvals): the workspace's chat
 * connections, a form that connects a Slack app (its bot token and signing secret are sent once and
 * never shown again) and a Remove button per connection. The API decides who may (workspace
 * admins, as a person); the page shows its refusal. Teams bots are connected through the API.
 * Its script is part of the settings page's bundle (console/browser/settings-page.ts).
 */

export function chatTabPanel(): Markup {
  return html`<section id="panel-chat" role="tabpanel" aria-labelledby="tab-chat" hidden>
<p>The Slack apps and Teams bots approvals are posted and decided through. Flows name a connection; only workspace admins connect one, and its secrets are never shown again.</p>
<table><thead><tr><th>Name</th><th>Platform</th><th>API / team</th><th>Set by</th><th></th></tr></thead>
<tbody id="chat-connections"></tbody></table><p id="no-chat" hidden>No chat platform is connected.</p>
<h2>Connect a Slack app</h2>
<form id="chat-form">
<label for="chat_name">Connection name</label><input id="chat_name" name="chat_name" required maxlength="50" placeholder="slack">
<label for="bot_token">Slack bot token (xoxb-…)</label><input id="bot_token" name="bot_token" type="password" autocomplete="off" required>
<label for="signing_secret">Slack signing secret</label><input id="signing_secret" name="signing_secret" type="password" autocomplete="off" required>
<label for="api_url">Web API base URL (optional; https://slack.com/api by default)</label><input id="api_url" name="api_url" type="url">
<button type="submit">Connect</button> <span id="chat-saved" hidden role="status">Connected.</span>
</form>
<p>Teams bots: <code>POST /api/w/&lt;workspace&gt;/workspaces/chat_connections/&lt;name&gt;</code> with <code>"platform": "teams"</code> (docs/chat-approvals.md).</p>
</section>`;
}
