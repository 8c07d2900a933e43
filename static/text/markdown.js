// markdown.js — text summaries rendered as markdown, as TensorBoard does,
// and safely: what a training program logs is data, never code the page
// runs.
//
// markdown-it parses with raw HTML off (a "<script>" in the text stays
// text) and refuses javascript:, vbscript:, file: and data: link targets;
// DOMPurify then cleans what markdown-it made, as a second wall: only
// http(s) and mailto links survive, no images (a logged image URL would
// make the page fetch from anywhere), no event handlers. Links open in a
// new tab without a referrer or an opener.

import DOMPurify from 'dompurify';
import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

const purify = DOMPurify(window);
purify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

const OPTIONS = {
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#)/i,
  FORBID_TAGS: ['img', 'svg', 'math', 'style', 'form', 'input', 'button', 'iframe'],
  FORBID_ATTR: ['style'],
  RETURN_DOM_FRAGMENT: true,
};

// The text as a fragment of safe DOM nodes.
export function renderMarkdown(text) {
  return purify.sanitize(md.render(String(text ?? '')), OPTIONS);
}
