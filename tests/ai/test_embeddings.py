"""The sentence-embedding model run in numpy (simulations/ai/embeddings.py): it gives what all-MiniLM-L6-v2 gives,
the same vector for the same text however it is asked, and nothing (with one warning) when its files are absent.

The model's files come with `make install` (CI runs it); a checkout without them skips the tests that need them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from simulations.ai import embeddings

needs_model = pytest.mark.skipif(
    not all((embeddings.directory() / name).is_file() for name in embeddings.FILES),
    reason="the embedding model is not installed (make install)",
)


@needs_model
def test_it_reproduces_the_models_published_similarities() -> None:
    """sentence-transformers' quick-start example with this model prints these similarities: the tokenizer, the
    six layers, the mean pooling and the normalisation all have to be right to give them to three decimals."""
    vectors = embeddings.embed(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    assert vectors is not None
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    published = np.array([[1.0, 0.6660, 0.1046], [0.6660, 1.0, 0.1411], [0.1046, 0.1411, 1.0]])
    np.testing.assert_allclose(vectors @ vectors.T, published, atol=1e-3)


@needs_model
@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "The delegation will pay for the new equipment.",
            "The delegation is going to fund the new machines.",
        ),
        ("Children are getting sick from the polluted river.", "The dirty river is making kids ill."),
    ],
)
def test_paraphrases_score_high_and_unrelated_sentences_low(a: str, b: str) -> None:
    paraphrase = embeddings.similarity(a, b)
    unrelated = embeddings.similarity(a, "My cat sleeps on the warm windowsill every afternoon.")
    assert paraphrase is not None and unrelated is not None
    assert paraphrase > 0.7, paraphrase
    assert unrelated < 0.3, unrelated


@needs_model
def test_a_text_gets_the_same_vector_alone_or_among_others() -> None:
    texts = ["Ban every product.", "A short list of products, with dates.", "Ban every product."]
    model = embeddings.model()
    assert model is not None
    together = model.encode(texts)
    alone = np.stack([model.encode([text])[0] for text in texts])
    np.testing.assert_array_equal(together, alone)
    np.testing.assert_array_equal(together[0], together[2])
    cached = embeddings.embed(texts)
    assert cached is not None
    np.testing.assert_array_equal(cached, together)


@pytest.fixture
def no_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The model's folder moved to an empty one: as on a checkout without `make install`."""
    monkeypatch.setenv(embeddings.DIRECTORY_ENV, str(tmp_path))
    embeddings.reset()
    yield tmp_path
    monkeypatch.undo()
    embeddings.reset()


def test_without_its_files_there_is_no_model_and_one_warning(
    no_model: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=embeddings.__name__):
        assert embeddings.model() is None
        assert embeddings.embed(["anything at all"]) is None
        assert embeddings.similarity("a", "b") is None
        assert not embeddings.available()
    warnings = [r for r in caplog.records if r.name == embeddings.__name__]
    assert len(warnings) == 1
    assert "make install" in warnings[0].getMessage()


def test_a_safetensors_file_is_read_as_its_arrays(tmp_path: Path) -> None:
    """The format by hand: an 8-byte header length, a JSON header, then the raw little-endian arrays."""
    first = np.arange(6, dtype="<f4").reshape(2, 3)
    second = np.array([7, -1], dtype="<i8")
    body = first.tobytes() + second.tobytes()
    header = {
        "__metadata__": {"format": "pt"},
        "first": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, first.nbytes]},
        "second": {"dtype": "I64", "shape": [2], "data_offsets": [first.nbytes, len(body)]},
    }
    raw = json.dumps(header).encode()
    path = tmp_path / "tiny.safetensors"
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + body)
    tensors = embeddings.read_safetensors(path)
    assert set(tensors) == {"first", "second"}
    np.testing.assert_array_equal(tensors["first"], first)
    np.testing.assert_array_equal(tensors["second"], second)
