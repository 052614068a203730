// A tiny DOM builder.  Strings always become text nodes: nothing is parsed as HTML.

export function h(tag, props, ...children) {
  const e = document.createElement(tag);
  if (props) {
    for (const k in props) {
      const v = props[k];
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (k === "style") Object.assign(e.style, v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(e, children);
  return e;
}

function append(e, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(e, c);
    else if (c instanceof Node) e.appendChild(c);
    else e.appendChild(document.createTextNode(String(c)));
  }
}
