"""Pretraining Similia's own encoder: a tiny BERT trained here from a slice of the real Latin Library (three files,
cleaned), loaded by name by every neural method; bad requests; a run resumed from its checkpoint, after a stop in
process and after a real kill of the command's process."""
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from detection.methods import registry
from detection.methods.infrastructure import model_store
from detection.methods.semantic import pretrain
from detection.methods.semantic.pretrain import PretrainConfig, PretrainError

REPO = Path(__file__).resolve().parents[3]
TINY = {"corpus": "latin_library_slice", "size": "tiny", "max_lines": 150, "steps": 24, "checkpoint_every": 8}


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def corpora(latin_library_slice):
    """The corpora directory holding the slice as the stored corpus ``latin_library_slice``."""
    mp = pytest.MonkeyPatch()
    mp.setenv("SIMILIA_CORPORA_DIR", str(latin_library_slice.parent))
    yield latin_library_slice.parent
    mp.undo()


@pytest.fixture(scope="module")
def trained(tmp_path_factory, corpora):
    """``la-tiny``, pretrained once for the module, and its models directory."""
    root = tmp_path_factory.mktemp("pretrained")
    lines = []
    card = pretrain.pretrain(PretrainConfig(**TINY), "la-tiny", models_dir=root, log=lines.append)
    return root, card, lines


def test_a_tiny_model_is_pretrained_from_the_cleaned_corpus_with_its_card(trained, latin_library_slice):
    root, card, lines = trained
    folder = root / "la-tiny"
    assert {"config.json", "model.safetensors", "tokenizer.json", "similia.json"} <= {p.name for p in folder.iterdir()}
    assert not (root / ".pretrain-la-tiny").exists()  # the working folder goes once the model is complete
    assert json.loads((folder / "similia.json").read_text()) == card
    assert card["kind"] == "pretrained-encoder" and card["size"] == "tiny" and card["steps"] == 24
    assert card["corpus"]["name"] == "latin_library_slice" and card["corpus"]["lines"] == 150
    assert card["shape"]["layers"] == 2 and card["parameters"] > 10_000
    assert card["versions"]["torch"] and card["versions"]["transformers"] and card["versions"]["tokenizers"]
    first, last = card["loss_curve"][0][1], card["loss_curve"][-1][1]
    # it learned something in 24 steps: below the loss of guessing uniformly over the vocabulary, and falling
    assert last < math.log(card["shape"]["vocab_size"]) - 0.15 and last < first - 0.15
    assert any("150 lines" in ln for ln in lines)
    # cleaned text only: no navigation word reached the vocabulary, Latin j/v are folded to i/u
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder))
    assert "classics" not in tok.get_vocab() and "library" not in tok.get_vocab()
    assert tok.tokenize("Iuuenis") == tok.tokenize("juvenis") and "[UNK]" not in tok.tokenize("juvenis")


def test_every_neural_method_loads_it_by_name(trained, latin_library_slice, tmp_path):
    from detection.methods.rerank import bi_encoder as BE
    from detection.methods.rerank import cross_encoder as CE
    from detection.methods.rerank.rerankers import CrossEncoderReranker

    root, _, _ = trained
    lines = pretrain.training_lines(latin_library_slice)
    texts = [ln for ln in lines if len(ln.split()) >= 8][:30]
    ids = [f"s{i}" for i in range(len(texts))]
    models = tmp_path / "models"
    shutil.copytree(root / "la-tiny", models / "la-tiny")
    with model_store.using(models):
        for name, params in (("dense-encoder", {}), ("token-maxsim", {"depth": 10})):
            r = registry.build(name, {"model": "la-tiny", "device": "cpu", **params})
            r.fit(ids, texts)
            top = r.search([texts[4], texts[11]], 3)
            assert top.ids(0)[0] == "s4" and top.ids(1)[0] == "s11", name
        long = " ".join(texts)  # longer than the 64 positions of the tiny model: cut to fit, not an error
        for scorer in ("contextual", "sentence_transformer"):  # the Greek pair scorers take any model by name
            method = registry.build(scorer, {"model": "la-tiny", "device": "cpu"})
            sims = method.pair_scores(texts[:3] + [long], texts[:3] + [long])
            assert np.allclose(sims, 1.0, atol=1e-4), scorer  # the same verse twice
        # base_model of the bi-encoder and the cross-encoder trainings, by name
        base = model_store.resolve("la-tiny")
        ex = BE.build_examples([(texts[i], i + 1) for i in range(0, 20, 2)], texts, negatives="query-random",
                               neg_ratio=1, loss="online-contrastive")
        be = BE.train(base_model=base, examples=ex, out_dir=models / "la-tiny-be",
                      options=BE.BiEncoderOptions(epochs=1, batch_size=8, max_steps=2, device="cpu"))
        assert be["steps"] == 2 and be["base_model"] == "la-tiny"
        r = registry.build("dense-encoder", {"model": "la-tiny-be", "device": "cpu"})
        assert r.fit(ids, texts).search([texts[0]], 2).indices.shape == (1, 2)
        labels = np.array([1, 0, 2, 0] * 4)
        ce = CE.train(base_model=base, queries=texts[:16], candidates=texts[1:17], labels=labels,
                      out_dir=models / "la-tiny-ce", options=CE.CrossEncoderOptions(
                          epochs=1, batch_size=8, effective_batch=8, max_steps=2, device="cpu"))
        assert ce["steps"] == 2
        from detection.methods.rerank.pipeline import Candidates

        cands = Candidates(query_ids=["q0", "q1"], query_texts=texts[:2], source_ids=ids, source_texts=texts,
                           qi=np.array([0, 0, 1]), si=np.array([1, 2, 3]), rank=np.array([0, 1, 0]),
                           score=np.array([1.0, 0.5, 1.0]))
        probs = CrossEncoderReranker(model="la-tiny-ce", device="cpu").predict_proba(cands)
        assert probs.shape == (3, 3) and np.allclose(probs.sum(1), 1.0, atol=1e-5)
        # a pair longer than the 64 positions the tiny model was pretrained with is cut to fit, not an error
        tok, model, _ = CE.load(models / "la-tiny-ce")
        assert CE.predict_proba(tok, model, [long], [long], max_length=256).shape == (1, 3)


def test_bad_requests_fail_naming_what_is_wrong(corpora, tmp_path):
    with pytest.raises(PretrainError, match="size must be one of tiny, small, base, not 'huge'"):
        PretrainConfig(corpus="latin_library_slice", size="huge")
    with pytest.raises(PretrainError, match="language must be one of la, grc"):
        PretrainConfig(corpus="latin_library_slice", language="en")
    for path in ("/work/shared/data/latin_library", "../latin_library_slice", "corpora/latin_library_slice", "~"):
        with pytest.raises(PretrainError, match="stored corpus"):
            PretrainConfig(corpus=path)
    with pytest.raises(PretrainError, match="no corpus named 'perseus' in .*latin_library_slice"):
        pretrain.pretrain(PretrainConfig(corpus="perseus", size="tiny"), "x", models_dir=tmp_path)
    with pytest.raises(PretrainError, match="steps must be an integer"):
        PretrainConfig(corpus="latin_library_slice", steps=-1)
    with pytest.raises(PretrainError, match="mixed_precision must be true or false"):
        PretrainConfig(corpus="latin_library_slice", mixed_precision="yes")
    (tmp_path / "taken").mkdir()
    with pytest.raises(PretrainError, match="a model named 'taken' is already in the models directory"):
        pretrain.pretrain(PretrainConfig(**TINY), "taken", models_dir=tmp_path)
    with pytest.raises(ValueError, match="not a path"):
        pretrain.pretrain(PretrainConfig(**TINY), "../escape", models_dir=tmp_path)


def _weights(folder):
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


def test_a_stopped_run_resumes_from_its_checkpoint_to_the_same_model(corpora, tmp_path):
    """Stopped after step 8 (checkpointed), started again: the same 24 steps as an uninterrupted run on the same
    tokenizer and blocks, to the same weights (block order, masks and dropout are drawn from the seed and the step).
    (The tokenizer itself is not bit-for-bit repeatable: ``tokenizers`` breaks ties between equally frequent
    merges in no fixed order, so a fresh run may learn a few other rare pieces.)"""
    cfg = PretrainConfig(**TINY)
    stopped, whole = tmp_path / "stopped", tmp_path / "whole"
    assert pretrain.pretrain(cfg, "la-tiny", models_dir=stopped, stop_after=8) == {"stopped_at": 8}
    work = stopped / ".pretrain-la-tiny"
    assert json.loads((work / "checkpoint-last" / "state.json").read_text())["step"] == 8
    shutil.copytree(work, whole / ".pretrain-la-tiny", ignore=shutil.ignore_patterns("checkpoint-last"))
    with pytest.raises(PretrainError, match="an unfinished run named 'la-tiny' has other settings \\(seed\\)"):
        pretrain.pretrain(PretrainConfig(**{**TINY, "seed": 7}), "la-tiny", models_dir=stopped)
    lines = []
    card = pretrain.pretrain(cfg, "la-tiny", models_dir=stopped, log=lines.append)
    assert any("resuming from the checkpoint of step 8/24" in ln for ln in lines)
    assert card["steps"] == 24 and card["steps_this_session"] == 16
    lines = []
    reference = pretrain.pretrain(cfg, "la-tiny", models_dir=whole, log=lines.append)
    assert any("reusing the tokenizer" in ln for ln in lines) and reference["steps_this_session"] == 24
    want, got = _weights(whole / "la-tiny"), _weights(stopped / "la-tiny")
    assert want.keys() == got.keys()
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-6, err_msg=key)
    assert card["loss_curve"] == reference["loss_curve"]


def test_the_command_killed_mid_run_resumes_from_its_checkpoint(corpora, tmp_path):
    """``manage.py pretrain_encoder`` in a real process, killed (SIGKILL) once a checkpoint is written; the same
    command again resumes there and finishes."""
    models = tmp_path / "models"
    env = {**os.environ, "SIMILIA_MODELS_DIR": str(models), "SIMILIA_CORPORA_DIR": str(corpora),
           "OMP_NUM_THREADS": "1", "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    cmd = [sys.executable, "manage.py", "pretrain_encoder", "--corpus", "latin_library_slice", "--name", "la-kill",
           "--size", "tiny", "--max-lines", "100", "--steps", "80", "--checkpoint-every", "4"]
    state = models / ".pretrain-la-kill" / "checkpoint-last" / "state.json"
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while not state.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert state.exists(), proc.communicate(timeout=5) if proc.poll() is not None else "no checkpoint in time"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    done = json.loads(state.read_text())["step"]
    assert 4 <= done < 80 and not (models / "la-kill").exists()
    again = subprocess.run(cmd[:-4] + ["--steps", str(done + 8), "--checkpoint-every", "4"], cwd=REPO, env=env,
                           capture_output=True, text=True, timeout=300)
    # other settings (fewer steps) are refused, naming them; the same settings resume
    assert again.returncode != 0 and "has other settings (shape, steps)" in again.stderr
    again = subprocess.run(cmd, cwd=REPO, env={**env}, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"resuming from the checkpoint of step {done}/80" in again.stderr
    card = json.loads((models / "la-kill" / "similia.json").read_text())
    assert card["steps"] == 80 and card["steps_this_session"] == 80 - done


def test_a_stride_samples_the_whole_corpus_and_max_lines_cuts_it(latin_library_slice):
    every = list(pretrain.training_lines(latin_library_slice))
    assert list(pretrain.training_lines(latin_library_slice, stride=3)) == every[::3]
    assert list(pretrain.training_lines(latin_library_slice, stride=3, max_lines=5)) == every[::3][:5]
    files = {line for line in every if line.startswith(("Si in ius vocat", "magnus es, domine"))}
    assert len(files) == 2  # the law text and the Confessions are both in, cleaned
