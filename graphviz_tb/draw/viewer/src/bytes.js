// Bytes the page carries as base64 text: the packed integer columns, the compressed graph data
// and the compressed layout worker (see graphviz_tb/write/page.py).

// The bytes of base64 text: the browser's own decoder where it has one, else atob's string
// copied byte by byte.
export function base64Bytes(text) {
  if (Uint8Array.fromBase64) return Uint8Array.fromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

// Compressed bytes inflated by the browser's DecompressionStream ("gzip" or "deflate", the
// zlib format), as a Response to read as text or bytes.
export function inflated(bytes, format) {
  if (typeof DecompressionStream !== "function") {
    throw new Error("this browser cannot decompress it (no DecompressionStream)");
  }
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream(format)));
}
