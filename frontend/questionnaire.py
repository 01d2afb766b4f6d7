"""The questionnaire: plain-language questions, their defaults, and the scenario v1 they build.

Answers are a flat dict of strings (exactly what the HTML form posts), so a half-finished
questionnaire can be saved as-is and resumed. `answers_to_inputs` turns them into the
engine's scenario v1; `inputs_to_answers` goes back (editing a saved scenario);
`errors_by_question` files the engine's dotted-path field errors under the questions that
caused them.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from advisor.engine.facts.catalog import Catalog
from advisor.engine.facts.constants import (
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_CORPUS_CHUNKS,
    DEFAULT_EMBEDDING_DIMS,
    DEFAULT_TOP_K,
)
from advisor.engine.facts.formatting import number
from advisor.engine.facts.limits import LIMITS, Limit
from advisor.engine.facts.vocabulary import TEAM_SKILLS
from advisor.engine.input.scenario import (
    DEFAULT_CONCURRENT_REQUESTS,
    DEFAULT_OUTPUT_TOKENS,
    DEFAULT_PROMPT_TOKENS,
    DEFAULT_SEQUENCE_LENGTH,
    DEFAULT_TARGET_MS_PER_TOKEN,
    DEFAULT_TARGET_TTFT_MS,
    DEFAULT_TRAINING_TOKENS,
)
from advisor.engine.result.echo import Constraints

WORKLOADS = ("training", "fine_tuning", "inference", "rag")
TRAINING_LIKE = ("training", "fine_tuning")
SERVING = ("inference", "rag")
"""The answers that serve a model: "rag" is serving with a retrieval pipeline in front (the
engine's workload "inference" with a ``rag`` section)."""
RAG_ANSWERS: dict[str, str] = {
    "rag_top_k": "top_k",
    "rag_chunk_tokens": "chunk_tokens",
    "rag_corpus_chunks": "corpus_chunks",
    "rag_embedding_dims": "embedding_dims",
}
"""The retrieval questions and the ``rag`` field each one answers."""
# The engine's scenario spec owns every default (advisor.engine.input.scenario): a question left at
# its default gives the engine exactly what an API client that leaves the field out gives it.
# An empty answer means "the engine's default" where that default depends on other answers
# (precision per GPU, global batch, sharding, serving deployment).
ENGINE_CONSTRAINTS = Constraints()


def _g(value: float) -> str:
    """A default as the form shows it: 50.0 -> "50", 4096 -> "4096"."""
    return f"{value:g}" if not float(value).is_integer() else str(int(value))


@dataclass(frozen=True)
class Choice:
    value: str
    label: str
    detail: str = ""


@dataclass(frozen=True)
class Question:
    """One question of the wizard.

    kind: "choice" (radio cards), "select", "int", "float", "text".
    show_if: (other question, values) - asked only when the other answer is one of values.
    workloads: asked only for these workloads.
    """

    name: str
    label: str
    why: str
    kind: str
    default: str = ""
    required: bool = True
    choices: tuple[Choice, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    unit: str = ""
    placeholder: str = ""
    show_if: tuple[str, tuple[str, ...]] | None = None
    workloads: tuple[str, ...] = WORKLOADS


@dataclass(frozen=True)
class Step:
    slug: str
    title: str
    intro: str
    questions: tuple[Question, ...] = field(default_factory=tuple)


# ---------------------------------------------------------------------------------------------
# Choices that come from the engine's catalog (GPUs, model presets)


def gpu_choices(catalog: Catalog) -> tuple[Choice, ...]:
    out = []
    for gpu in catalog.gpus:
        tflops, fmt = (
            (gpu.bf16_dense_tflops, "bf16")
            if gpu.bf16_dense_tflops
            else (gpu.fp16_dense_tflops, "fp16")
        )
        detail = (
            f"{gpu.vendor} · {gpu.memory_gb:g} GB memory · {gpu.gpus_per_server} per server"
            f" · {tflops:g} TFLOP/s {fmt}"
        )
        out.append(Choice(gpu.id, gpu.name, detail))
    return tuple(out)


def _params_label(params_b: float) -> str:
    return f"{params_b:g} B" if params_b < 1000 else f"{params_b / 1000:g} T"


def model_choices(catalog: Catalog) -> tuple[Choice, ...]:
    out = []
    for model in catalog.models:
        detail = f"{_params_label(model.params_b)} parameters · {model.layers} layers"
        if model.moe_experts > 1:
            detail += (
                f" · mixture of {model.moe_experts} experts, {model.moe_top_k} active"
                f" ({_params_label(model.active_params_b)} active)"
            )
        out.append(Choice(model.id, model.name, detail))
    out.append(Choice("custom", "My own model", "Enter its size and shape yourself"))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# The steps


def build_steps(catalog: Catalog) -> tuple[Step, ...]:
    """The wizard's steps; catalog-driven choices are read from the current catalog."""
    gpus = gpu_choices(catalog)
    default_gpu = "h100-sxm" if catalog.gpu("h100-sxm") else (gpus[0].value if gpus else "")
    models = model_choices(catalog)
    default_model = "llama3-70b" if catalog.model("llama3-70b") else models[0].value
    custom = ("model_choice", ("custom",))
    training = TRAINING_LIKE
    inference = SERVING
    rag = ("rag",)
    return (
        Step(
            "job",
            "Your job",
            "Tell us what the GPUs will do. Everything else follows from this.",
            (
                Question(
                    "workload",
                    "What will the GPUs do?",
                    "Training sends the whole model's gradients across the network every step; "
                    "inference mostly sends requests and answers. This decides how much network "
                    "you need more than anything else.",
                    "choice",
                    default="training",
                    choices=(
                        Choice("training", "Train a model", "Pre-training from scratch"),
                        Choice("fine_tuning", "Fine-tune a model", "Adapt an existing model"),
                        Choice("inference", "Serve a model", "Answer users' requests"),
                        Choice(
                            "rag",
                            "Answer from your documents (RAG)",
                            "Embedding, vector search, then a model that answers",
                        ),
                    ),
                ),
                Question(
                    "scale",
                    "One server or many?",
                    "Inside one server, GPUs talk over NVLink and need no special network. "
                    "Once a job spans servers, their traffic crosses the network and the "
                    "network can leave expensive GPUs waiting.",
                    "choice",
                    default="many",
                    choices=(
                        Choice("one", "One server", "Up to 8 GPUs in a single box"),
                        Choice("many", "Several servers", "A cluster of GPU servers"),
                    ),
                ),
            ),
        ),
        Step(
            "model",
            "The model",
            "Pick a well-known model of about the same size, or describe your own.",
            (
                Question(
                    "model_choice",
                    "Which model (or one of the same size)?",
                    "The model's size sets how many bytes move between GPUs: every step of "
                    "training exchanges about 2 bytes per parameter.",
                    "choice",
                    default=default_model,
                    choices=models,
                ),
                Question(
                    "custom_params_b",
                    "Parameters",
                    "The total number of weights, in billions.",
                    "float",
                    minimum=0.001,
                    unit="billion",
                    placeholder="e.g. 13",
                    show_if=custom,
                ),
                Question(
                    "custom_layers",
                    "Layers",
                    "Transformer blocks; each one adds network messages when split.",
                    "int",
                    minimum=1,
                    placeholder="e.g. 40",
                    show_if=custom,
                ),
                Question(
                    "custom_hidden",
                    "Hidden size",
                    "Width of the model; sets the size of activation messages.",
                    "int",
                    minimum=1,
                    placeholder="e.g. 5120",
                    show_if=custom,
                ),
                Question(
                    "custom_heads",
                    "Attention heads",
                    "Must divide the hidden size.",
                    "int",
                    minimum=1,
                    placeholder="e.g. 40",
                    show_if=custom,
                ),
                Question(
                    "custom_kv_heads",
                    "Key/value heads",
                    "Fewer KV heads (grouped-query attention) means a smaller cache. "
                    "Leave empty if equal to the attention heads.",
                    "int",
                    required=False,
                    minimum=1,
                    show_if=custom,
                ),
                Question(
                    "custom_vocab",
                    "Vocabulary size",
                    "Leave empty for a typical 32,000.",
                    "int",
                    required=False,
                    minimum=1,
                    show_if=custom,
                ),
                Question(
                    "custom_moe_experts",
                    "Experts (mixture of experts)",
                    "Mixture-of-experts models send tokens to experts on other GPUs: "
                    "the most network-hungry traffic there is. 0 for a dense model.",
                    "int",
                    required=False,
                    default="0",
                    minimum=0,
                    show_if=custom,
                ),
                Question(
                    "custom_moe_top_k",
                    "Active experts per token",
                    "How many experts each token visits (0 for a dense model).",
                    "int",
                    required=False,
                    default="0",
                    minimum=0,
                    show_if=custom,
                ),
                Question(
                    "precision",
                    "Number format",
                    "Lower precision computes faster, so the network has less time to hide "
                    "behind the compute. bf16 is the usual choice (fp16 on GPUs without "
                    "bf16); fp8 on recent GPUs; fp4 (NVFP4) for serving on Blackwell; mxfp4 "
                    "for serving an MoE model as gpt-oss ships (4-bit experts, the rest bf16). "
                    "Left as usual, a served model runs as its publisher ships it: fp8 for "
                    "DeepSeek and Kimi K2, mxfp4 for gpt-oss; and Llama 3.1 405B, Llama 4 "
                    "Maverick and Qwen3 run their publisher's fp8 release where their bf16 "
                    "weights would not fit one server.",
                    "select",
                    default="",
                    required=False,
                    choices=(
                        Choice("", "Usual (as the model ships)"),
                        Choice("bf16", "bf16"),
                        Choice("fp8", "fp8 (Hopper, Blackwell, MI300)"),
                        Choice("fp16", "fp16"),
                        Choice("fp4", "fp4 (NVFP4, Blackwell serving)"),
                        Choice("mxfp4", "mxfp4 (gpt-oss as it ships)"),
                    ),
                ),
                Question(
                    "sequence_length",
                    "Sequence length",
                    "Tokens per sample (training) or context window (serving). Longer "
                    "sequences mean bigger activations and KV caches.",
                    "int",
                    default=_g(DEFAULT_SEQUENCE_LENGTH),
                    minimum=1,
                    unit="tokens",
                ),
            ),
        ),
        Step(
            "hardware",
            "The GPUs",
            "Which accelerators, and how many of them.",
            (
                Question(
                    "gpu",
                    "Which GPU?",
                    "Faster GPUs finish their compute sooner, so the network must keep up "
                    "with them; GPU memory decides whether a model fits in one server.",
                    "choice",
                    default=default_gpu,
                    choices=gpus,
                ),
                Question(
                    "gpus",
                    "How many GPUs in total?",
                    "More GPUs means more servers, more switches, and more chances that one "
                    "slow link holds everyone up.",
                    "int",
                    default="64",
                    minimum=1,
                    maximum=1_000_000,
                    unit="GPUs",
                ),
                Question(
                    "gpus_per_node",
                    "GPUs per server",
                    "Leave empty to use the usual server for this GPU (8 for HGX/DGX-class).",
                    "int",
                    required=False,
                    minimum=1,
                    maximum=128,
                    unit="per server",
                ),
            ),
        ),
        Step(
            "work",
            "The work",
            "How much work, and how fast it must be. This is what the network's cost is "
            "weighed against.",
            (
                Question(
                    "total_tokens_b",
                    "How many tokens will the run process?",
                    "The length of the job. A longer run makes every percent of idle GPU time "
                    "cost more, which can pay for a faster network.",
                    "float",
                    default=_g(DEFAULT_TRAINING_TOKENS / 1e9),
                    minimum=0.000001,
                    unit="billion tokens",
                    workloads=training,
                ),
                Question(
                    "global_batch_sequences",
                    "Global batch size",
                    "Sequences per optimizer step across all GPUs. Bigger batches mean fewer, "
                    "larger gradient exchanges, which are easier on the network. Leave it "
                    "empty for the batch that published runs of this size use.",
                    "int",
                    default="",
                    required=False,
                    minimum=1,
                    unit="sequences",
                    placeholder="usual for this size",
                    workloads=training,
                ),
                Question(
                    "sharding",
                    "How is the model's memory shared?",
                    "Sharding the model across GPUs (FSDP / ZeRO-3) saves memory but moves "
                    "about 50 % more bytes per step over the network.",
                    "select",
                    default="",
                    required=False,
                    choices=(
                        Choice(
                            "", "Let the advisor choose (ZeRO-1, or ZeRO-3 when memory needs it)"
                        ),
                        Choice("none", "Each GPU group keeps a full copy (plain data parallel)"),
                        Choice("zero1", "Share the optimizer state (ZeRO-1)"),
                        Choice("zero3", "Share everything (FSDP / ZeRO-3)"),
                    ),
                    workloads=training,
                ),
                Question(
                    "replicas",
                    "Does each server answer requests on its own?",
                    "If every server holds a full copy of the model, requests never cross "
                    "the network and standard Ethernet is enough. If the model is split "
                    "across servers, every generated token waits on the network.",
                    "choice",
                    default="auto",
                    choices=(
                        Choice("independent", "Yes, independent copies", "Each server serves"),
                        Choice("split", "No, one model split across servers", "Too big for one"),
                        Choice(
                            "disaggregated",
                            "Separate prompt and answer servers",
                            "Prefill and decode pools (Dynamo, llm-d, SGLang)",
                        ),
                        Choice("auto", "I don't know", "The advisor decides from the model size"),
                    ),
                    workloads=inference,
                ),
                Question(
                    "requests_per_s",
                    "How many new requests arrive per second at the busiest time?",
                    "Sets the load: queues and batches grow with it, and so does the time a "
                    "user waits. Leave it empty if you don't know: we then assume the number "
                    "of requests at once below, each waiting for its answer before the next.",
                    "float",
                    default="",
                    required=False,
                    minimum=0.000001,
                    unit="requests per second",
                    workloads=inference,
                ),
                Question(
                    "concurrent_requests",
                    "How many requests at once?",
                    "The load: users being answered at the same moment, each sending the next "
                    "request when the last is answered. Used when the arrival rate above is "
                    "empty; with a rate, the rate sets how many are in flight.",
                    "int",
                    default=_g(DEFAULT_CONCURRENT_REQUESTS),
                    minimum=1,
                    unit="requests",
                    workloads=inference,
                ),
                Question(
                    "prompt_tokens",
                    "Prompt length",
                    "Tokens in a typical request.",
                    "int",
                    default=_g(DEFAULT_PROMPT_TOKENS),
                    minimum=1,
                    unit="tokens",
                    workloads=inference,
                ),
                Question(
                    "output_tokens",
                    "Answer length",
                    "Tokens generated per request.",
                    "int",
                    default=_g(DEFAULT_OUTPUT_TOKENS),
                    minimum=1,
                    unit="tokens",
                    workloads=inference,
                ),
                Question(
                    "target_ms_per_token",
                    "Latency target per generated token",
                    "50 ms per token is about 20 tokens a second, faster than people read. "
                    "A split model pays network latency on every token.",
                    "float",
                    default=_g(DEFAULT_TARGET_MS_PER_TOKEN),
                    minimum=0.1,
                    unit="ms per token",
                    workloads=inference,
                ),
                Question(
                    "rag_top_k",
                    "How many document chunks does each question retrieve?",
                    "The vector search returns this many chunks (top-k) and they become part "
                    "of the prompt. 4 is LangChain's default.",
                    "int",
                    default=_g(DEFAULT_TOP_K),
                    minimum=1,
                    unit="chunks",
                    workloads=rag,
                ),
                Question(
                    "rag_chunk_tokens",
                    "How long is one chunk?",
                    "Documents are split into chunks of this many tokens before they are "
                    "embedded; 128-512 is common. Chunks times top-k must fit in the prompt "
                    "length above.",
                    "int",
                    default=_g(DEFAULT_CHUNK_TOKENS),
                    minimum=1,
                    unit="tokens",
                    workloads=rag,
                ),
                Question(
                    "rag_corpus_chunks",
                    "How many chunks are in the index?",
                    "Your documents' size in chunks: it sets the vector-search servers' "
                    "memory (an in-memory HNSW index).",
                    "int",
                    default=_g(DEFAULT_CORPUS_CHUNKS),
                    minimum=1,
                    unit="chunks",
                    workloads=rag,
                ),
                Question(
                    "rag_embedding_dims",
                    "Embedding size",
                    "Dimensions of one embedding vector (1,024 for bge-large or e5-large).",
                    "int",
                    default=_g(DEFAULT_EMBEDDING_DIMS),
                    minimum=1,
                    unit="dimensions",
                    workloads=rag,
                ),
                Question(
                    "target_ttft_ms",
                    "How long may a user wait for the first word of the answer?",
                    "The time to first token, for 95 of 100 requests. 2 seconds is a common "
                    "goal for chat; keep 2000 if you don't know. With separate prompt and "
                    "answer servers it includes moving the prompt's memory (KV cache) over "
                    "the network, which is where RDMA matters.",
                    "float",
                    default=_g(DEFAULT_TARGET_TTFT_MS),
                    minimum=1,
                    unit="ms",
                    workloads=inference,
                ),
            ),
        ),
        Step(
            "priorities",
            "Money and people",
            "What you pay for GPUs, your budget, and who will run the network.",
            (
                Question(
                    "gpu_pricing",
                    "Are the GPUs owned or rented?",
                    "Idle GPUs cost money either way; rented GPUs are billed by the hour, "
                    "owned ones lose value over their life.",
                    "choice",
                    default=ENGINE_CONSTRAINTS.gpu_pricing,
                    choices=(
                        Choice(
                            "owned",
                            "We own them",
                            f"Bought, amortized over {_g(ENGINE_CONSTRAINTS.amortization_years)}"
                            " years",
                        ),
                        Choice("cloud", "We rent them", "Paid per GPU-hour"),
                    ),
                ),
                Question(
                    "gpu_hour_usd",
                    "Price per GPU-hour",
                    "Leave empty to use a typical market price for this GPU.",
                    "float",
                    required=False,
                    minimum=0.01,
                    unit="USD per GPU-hour",
                    show_if=("gpu_pricing", ("cloud",)),
                ),
                Question(
                    "network_budget_usd",
                    "Network budget",
                    "The most you can spend on NICs, switches, optics and cables. Leave "
                    "empty if there is no hard limit.",
                    "float",
                    required=False,
                    minimum=0,
                    unit="USD",
                    placeholder="no limit",
                ),
                Question(
                    "team_skills",
                    "What does your team already run?",
                    "A fabric your team does not know costs time and outages. InfiniBand "
                    "and lossless RoCE both need skills beyond ordinary Ethernet.",
                    "choice",
                    default=ENGINE_CONSTRAINTS.team_skills,
                    choices=tuple(
                        Choice(skill, words.answer, words.hint)
                        for skill, words in TEAM_SKILLS.items()
                    ),
                ),
                Question(
                    "prefer",
                    "What matters most?",
                    "We pick the design with the lowest total cost to finish the work; this "
                    "decides how we break ties between cheaper and faster.",
                    "choice",
                    default=ENGINE_CONSTRAINTS.prefer,
                    choices=(
                        Choice("cost", "Lowest cost", "Spend as little as possible"),
                        Choice("balanced", "Balance", "Good value for money"),
                        Choice("performance", "Speed", "Fastest time to result"),
                    ),
                ),
            ),
        ),
        Step(
            "review",
            "Review",
            "Check your answers, give the scenario a name, and get the recommendation.",
            (
                Question(
                    "name",
                    "Name this scenario",
                    "So you can find it again.",
                    "text",
                    required=False,
                    placeholder="e.g. 70B pre-training, 64 GPUs",
                ),
                Question(
                    "customer",
                    "Company",
                    "Helps our engineers find your scenario if you ask them for a quote.",
                    "text",
                    required=False,
                ),
            ),
        ),
    )


class Answers(dict[str, str]):
    """The questionnaire's answers by question name, as the form posted them (text).

    One rule for a question not answered: it reads "" (``answers["gpus"]``), so no reader
    keeps a default of its own; ``workload`` is the one answer with a meaning when empty.
    """

    def __missing__(self, name: str) -> str:
        return ""

    @classmethod
    def of(cls, answers: Mapping[str, str]) -> Answers:
        """``answers`` as an :class:`Answers` (the same object when it already is one)."""
        if isinstance(answers, Answers):
            return answers
        return cls({name: value or "" for name, value in answers.items()})

    @property
    def workload(self) -> str:
        """training | fine_tuning | inference (training when not answered)."""
        return self["workload"] or "training"


def step_slugs(steps: tuple[Step, ...]) -> list[str]:
    return [s.slug for s in steps]


def default_answers(steps: tuple[Step, ...]) -> Answers:
    return Answers({q.name: q.default for s in steps for q in s.questions if q.default})


def is_asked(question: Question, answers: Mapping[str, str]) -> bool:
    """Whether this question applies to these answers (its workload and show_if)."""
    answers = Answers.of(answers)
    if answers.workload not in question.workloads:
        return False
    if question.show_if is not None:
        other, values = question.show_if
        return answers[other] in values
    return True


def visible_questions(step: Step, answers: Mapping[str, str]) -> list[Question]:
    """Questions of a step for this workload (show_if ones are rendered and toggled client-side)."""
    workload = Answers.of(answers).workload
    return [q for q in step.questions if workload in q.workloads]


# ---------------------------------------------------------------------------------------------
# Validation of the answers themselves (before the engine sees them)


def _parse_number(raw: str, *, integer: bool) -> float | int | None:
    text = raw.strip().replace(",", "").replace("_", "")
    if not text:
        return None
    value = float(text)  # ValueError for text
    if not math.isfinite(value):  # "inf", "nan", "1e309": not an answer (and int() overflows)
        raise ValueError("not finite")
    if integer:
        if value != int(value):
            raise ValueError("not whole")
        return int(value)
    return value


# Answers given in other units than the engine's field (billions of tokens).
_ANSWER_SCALE: dict[str, float] = {"total_tokens_b": 1e9}


def _engine_limit(name: str) -> tuple[Limit, float] | None:
    """The engine's range (advisor.engine.facts.limits) for the field this question fills."""
    for path, question in _FIELD_TO_QUESTION.items():
        if question == name and path in LIMITS:
            return LIMITS[path], _ANSWER_SCALE.get(name, 1.0)
    return None


def check_question(question: Question, raw: str) -> str | None:
    """A sentence naming what is wrong with this answer, or None."""
    raw = (raw or "").strip()
    if not raw:
        return f"{question.label}: please answer this question." if question.required else None
    if question.kind in ("choice", "select"):
        allowed = [c.value for c in question.choices]
        if raw not in allowed:
            return f"'{raw}' is not one of the choices."
        return None
    if question.kind in ("int", "float"):
        integer = question.kind == "int"
        try:
            value = _parse_number(raw, integer=integer)
        except ValueError:
            what = "a whole number" if integer else "a number"
            return f"Enter {what}; '{raw}' is not one."
        assert value is not None
        if question.minimum is not None and value < question.minimum:
            if question.minimum == 0:
                return "Enter 0 or more."
            low = f"{question.minimum:g}"
            return f"Must be at least {low}; you entered {raw}."
        if question.maximum is not None and value > question.maximum:
            return f"Must be at most {question.maximum:g}; you entered {raw}."
        engine_limit = _engine_limit(question.name)
        if engine_limit is not None:
            limit, scale = engine_limit
            if limit.refuses(value * scale):
                return (
                    f"Must be between {number(limit.low / scale)} and "
                    f"{number(limit.high / scale)}; "
                    f"you entered {raw}."
                )
    if question.kind == "text" and len(raw) > 200:
        return "Keep it under 200 characters."
    return None


def check_step(step: Step, answers: Mapping[str, str], catalog: Catalog) -> dict[str, list[str]]:
    """Per-question problems for the questions of this step that apply to these answers."""
    answers = Answers.of(answers)
    errors: dict[str, list[str]] = {}
    for question in step.questions:
        if not is_asked(question, answers):
            continue
        problem = check_question(question, answers[question.name])
        if problem:
            errors.setdefault(question.name, []).append(problem)
    for name, problem in _cross_checks(step, answers, catalog):
        if name not in errors:
            errors.setdefault(name, []).append(problem)
    return errors


def _cross_checks(step: Step, answers: Answers, catalog: Catalog) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    if step.slug == "hardware":
        gpu = catalog.gpu(answers["gpu"])
        try:
            gpus = _parse_number(answers["gpus"], integer=True)
            per_node = _parse_number(answers["gpus_per_node"], integer=True)
        except ValueError:
            return problems
        per_server = per_node or (gpu.gpus_per_server if gpu else None)
        if gpus and per_server and answers["scale"] == "one" and gpus > per_server:
            problems.append(
                (
                    "gpus",
                    f"One server holds {per_server} of these GPUs, but you asked for {gpus}. "
                    "Choose 'Several servers' on the first page, or fewer GPUs.",
                )
            )
        if gpus and per_server and gpus > per_server and gpus % per_server:
            problems.append(
                (
                    "gpus",
                    f"{gpus} GPUs do not fill whole servers of {per_server}; "
                    f"try {gpus - gpus % per_server or per_server} or "
                    f"{gpus + per_server - gpus % per_server}.",
                )
            )
    if step.slug == "model" and answers["model_choice"] == "custom":
        try:
            hidden = _parse_number(answers["custom_hidden"], integer=True)
            heads = _parse_number(answers["custom_heads"], integer=True)
            experts = _parse_number(answers["custom_moe_experts"] or "0", integer=True)
            top_k = _parse_number(answers["custom_moe_top_k"] or "0", integer=True)
        except ValueError:
            return problems
        if hidden and heads and hidden % heads:
            problems.append(
                ("custom_heads", f"{heads} heads do not divide a hidden size of {hidden}.")
            )
        if experts and top_k and top_k > experts:
            problems.append(
                (
                    "custom_moe_top_k",
                    f"A token cannot visit {top_k} experts when there are only {experts}.",
                )
            )
        if (experts or 0) > 1 and not top_k:
            problems.append(
                ("custom_moe_top_k", "A mixture of experts needs at least 1 active expert.")
            )
    return problems


# ---------------------------------------------------------------------------------------------
# Answers <-> scenario v1


def _num(answers: Answers, name: str, *, integer: bool = False) -> Any:
    try:
        return _parse_number(answers[name], integer=integer)
    except ValueError:
        return answers[name]  # let the engine name the problem


def answers_to_inputs(answers: Mapping[str, str], catalog: Catalog) -> dict[str, Any]:
    """The scenario v1 these answers describe (only what the person said; engine fills defaults)."""
    answers = Answers.of(answers)
    workload = answers.workload
    gpu_id = answers["gpu"]
    gpus = _num(answers, "gpus", integer=True)
    per_node = _num(answers, "gpus_per_node", integer=True)
    if answers["scale"] == "one":
        gpu = catalog.gpu(gpu_id)
        if gpus is None and gpu is not None:
            gpus = per_node or gpu.gpus_per_server
    engine_workload = "inference" if workload == "rag" else workload
    inputs: dict[str, Any] = {"workload": engine_workload, "gpu": gpu_id, "gpus": gpus}
    if per_node is not None:
        inputs["gpus_per_node"] = per_node
    elif answers["scale"] == "one" and isinstance(gpus, int) and gpus > 0:
        gpu = catalog.gpu(gpu_id)
        # A single server: all the GPUs asked for sit in one box.
        if gpu is not None and gpus <= gpu.gpus_per_server:
            inputs["gpus_per_node"] = gpus

    if answers["model_choice"] == "custom":
        model: dict[str, Any] = {
            "params_b": _num(answers, "custom_params_b"),
            "layers": _num(answers, "custom_layers", integer=True),
            "hidden": _num(answers, "custom_hidden", integer=True),
            "heads": _num(answers, "custom_heads", integer=True),
        }
        for key in ("kv_heads", "vocab", "moe_experts", "moe_top_k"):
            value = _num(answers, f"custom_{key}", integer=True)
            if value is not None:
                model[key] = value
        inputs["model"] = model
    else:
        inputs["model"] = answers["model_choice"] or ""

    if answers["precision"]:
        inputs["precision"] = answers["precision"]
    seq = _num(answers, "sequence_length", integer=True)
    if seq is not None:
        inputs["sequence_length"] = seq

    if workload in TRAINING_LIKE:
        training: dict[str, Any] = {}
        tokens_b = _num(answers, "total_tokens_b")
        if isinstance(tokens_b, int | float):
            training["total_tokens"] = float(tokens_b) * 1e9
        elif tokens_b is not None:
            training["total_tokens"] = tokens_b
        batch = _num(answers, "global_batch_sequences", integer=True)
        if batch is not None:
            training["global_batch_sequences"] = batch
        if answers["sharding"]:
            training["sharding"] = answers["sharding"]
        if training:
            inputs["training"] = training
    else:
        shape = answers["replicas"] or "auto"
        inference: dict[str, Any] = {}
        if shape != "auto":
            inference["independent_replicas"] = shape == "independent"
        if shape == "disaggregated":
            inference["deployment"] = "disaggregated"
        for key in ("concurrent_requests", "prompt_tokens", "output_tokens"):
            value = _num(answers, key, integer=True)
            if value is not None:
                inference[key] = value
        for key in ("target_ms_per_token", "requests_per_s", "target_ttft_ms"):
            number = _num(answers, key)
            if number is not None:
                inference[key] = number
        inputs["inference"] = inference
    if workload == "rag":
        rag: dict[str, Any] = {}
        for name, key in RAG_ANSWERS.items():
            value = _num(answers, name, integer=True)
            if value is not None:
                rag[key] = value
        inputs["rag"] = rag

    constraints: dict[str, Any] = {}
    for key in ("gpu_pricing", "team_skills", "prefer"):
        if answers[key]:
            constraints[key] = answers[key]
    if answers["gpu_pricing"] == "cloud":
        price = _num(answers, "gpu_hour_usd")
        if price is not None:
            constraints["gpu_hour_usd"] = price
    budget = _num(answers, "network_budget_usd")
    if budget is not None:
        constraints["network_budget_usd"] = budget
    if constraints:
        inputs["constraints"] = constraints
    return inputs


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


_DEPLOYMENT_ANSWERS = {
    "replicas": "independent",
    "split": "split",
    "disaggregated": "disaggregated",
}


def inputs_to_answers(inputs: dict[str, Any], catalog: Catalog) -> Answers:
    """Best-effort inverse of answers_to_inputs, to edit a saved scenario in the wizard."""
    answers = default_answers(build_steps(catalog))
    workload = str(inputs.get("workload") or "training")
    rag = inputs.get("rag")
    answers["workload"] = "rag" if workload == "inference" and rag is not None else workload
    if isinstance(rag, dict):
        for name, key in RAG_ANSWERS.items():
            if rag.get(key) is not None:
                answers[name] = _text(rag[key])
    answers["gpu"] = _text(inputs.get("gpu"))
    answers["gpus"] = _text(inputs.get("gpus"))
    answers["gpus_per_node"] = _text(inputs.get("gpus_per_node"))
    gpu = catalog.gpu(answers["gpu"])
    per_server = inputs.get("gpus_per_node") or (gpu.gpus_per_server if gpu else 8)
    try:
        answers["scale"] = "one" if int(inputs.get("gpus") or 0) <= int(per_server) else "many"
    except (TypeError, ValueError):
        answers["scale"] = "many"
    model = inputs.get("model")
    if isinstance(model, dict):
        answers["model_choice"] = "custom"
        for key in ("params_b", "layers", "hidden", "heads", "kv_heads", "vocab"):
            answers[f"custom_{key}"] = _text(model.get(key))
        answers["custom_moe_experts"] = _text(model.get("moe_experts", 0))
        answers["custom_moe_top_k"] = _text(model.get("moe_top_k", 0))
    else:
        answers["model_choice"] = _text(model)
    for key in ("precision", "sequence_length"):
        if inputs.get(key) is not None:
            answers[key] = _text(inputs[key])
    training = inputs.get("training") or {}
    if isinstance(training, dict):
        if training.get("total_tokens") is not None:
            try:
                answers["total_tokens_b"] = _text(float(training["total_tokens"]) / 1e9)
            except (TypeError, ValueError):
                answers["total_tokens_b"] = _text(training["total_tokens"])
        if training.get("global_batch_sequences") is not None:
            answers["global_batch_sequences"] = _text(training["global_batch_sequences"])
        elif training.get("global_batch_tokens") is not None:
            # Shown in sequences, as the engine counts them (tokens / sequence length).
            try:
                sequence = int(inputs.get("sequence_length") or DEFAULT_SEQUENCE_LENGTH)
                tokens = int(training["global_batch_tokens"])
                answers["global_batch_sequences"] = str(max(1, round(tokens / sequence)))
            except (TypeError, ValueError, ZeroDivisionError):
                answers["global_batch_sequences"] = _text(training["global_batch_tokens"])
        if training.get("sharding"):
            answers["sharding"] = _text(training["sharding"])
    inference = inputs.get("inference") or {}
    if isinstance(inference, dict):
        if inference.get("independent_replicas") is not None:
            answers["replicas"] = "independent" if inference["independent_replicas"] else "split"
        else:
            answers["replicas"] = "auto"
        deployment = inference.get("deployment")
        if deployment in _DEPLOYMENT_ANSWERS or inference.get("pools"):
            answers["replicas"] = _DEPLOYMENT_ANSWERS.get(str(deployment), "disaggregated")
        for key in (
            "concurrent_requests",
            "prompt_tokens",
            "output_tokens",
            "target_ms_per_token",
            "requests_per_s",
            "target_ttft_ms",
        ):
            if inference.get(key) is not None:
                answers[key] = _text(inference[key])
    constraints = inputs.get("constraints") or {}
    if isinstance(constraints, dict):
        for key in ("gpu_pricing", "team_skills", "prefer", "gpu_hour_usd", "network_budget_usd"):
            if constraints.get(key) is not None:
                answers[key] = _text(constraints[key])
    return answers


# ---------------------------------------------------------------------------------------------
# Editing a saved scenario: the form changes only what the person changed

# The scenario v1 fields (dotted paths) each question writes. Every other field of a saved
# scenario (constraints.utilization, pue, parallelism, design, a custom model's ffn_hidden, an
# API client's name and description ...) is not on the form, so editing never touches it.
QUESTION_FIELDS: dict[str, tuple[str, ...]] = {
    "workload": ("workload",),
    "scale": ("gpus", "gpus_per_node"),
    "model_choice": ("model",),
    "custom_params_b": ("model.params_b",),
    "custom_layers": ("model.layers",),
    "custom_hidden": ("model.hidden",),
    "custom_heads": ("model.heads",),
    "custom_kv_heads": ("model.kv_heads",),
    "custom_vocab": ("model.vocab",),
    "custom_moe_experts": ("model.moe_experts",),
    "custom_moe_top_k": ("model.moe_top_k",),
    "precision": ("precision",),
    "sequence_length": ("sequence_length",),
    "gpu": ("gpu",),
    "gpus": ("gpus",),
    "gpus_per_node": ("gpus_per_node",),
    "total_tokens_b": ("training.total_tokens",),
    "global_batch_sequences": ("training.global_batch_sequences", "training.global_batch_tokens"),
    "sharding": ("training.sharding",),
    "replicas": ("inference.independent_replicas", "inference.deployment", "inference.pools"),
    "requests_per_s": ("inference.requests_per_s",),
    "concurrent_requests": ("inference.concurrent_requests",),
    "prompt_tokens": ("inference.prompt_tokens",),
    "output_tokens": ("inference.output_tokens",),
    "target_ms_per_token": ("inference.target_ms_per_token",),
    "target_ttft_ms": ("inference.target_ttft_ms",),
    **{name: (f"rag.{key}",) for name, key in RAG_ANSWERS.items()},
    "gpu_pricing": ("constraints.gpu_pricing",),
    "gpu_hour_usd": ("constraints.gpu_hour_usd",),
    "network_budget_usd": ("constraints.network_budget_usd",),
    "team_skills": ("constraints.team_skills",),
    "prefer": ("constraints.prefer",),
}
_MISSING = object()


def _get_path(data: Any, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(data, dict) or key not in data:
            return _MISSING
        data = data[key]
    return data


def _put_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set (or, for _MISSING, remove) `path`; a missing section is created, a non-object
    parent (a preset model's id under "model.layers") means the field does not apply."""
    *parents, leaf = path.split(".")
    node: Any = data
    for key in parents:
        if key not in node:
            if value is _MISSING:
                return
            node[key] = {}
        node = node[key]
        if not isinstance(node, dict):
            return
    if value is _MISSING:
        node.pop(leaf, None)
    else:
        node[leaf] = copy.deepcopy(value)


def edited_inputs(
    base: dict[str, Any] | None, answers: Mapping[str, str], catalog: Catalog
) -> dict[str, Any]:
    """The scenario v1 of a saved scenario (`base`) after the questionnaire's `answers`.

    An answer the person left as it was keeps the saved field exactly (its value, its
    absence, its number format); a changed answer replaces the fields it writes
    (QUESTION_FIELDS); fields no question writes are kept. A new scenario (no base) is
    what the answers say.
    """
    answers = Answers.of(answers)
    edited = answers_to_inputs(answers, catalog)
    if not isinstance(base, dict):
        return edited
    before = inputs_to_answers(base, catalog)
    out = copy.deepcopy(base)
    if answers["workload"] != before["workload"]:
        # Another kind of job: the old workload's sections and plan do not carry over.
        for section in ("training", "inference", "rag", "parallelism"):
            out.pop(section, None)
            if section in edited:
                out[section] = copy.deepcopy(edited[section])
    if answers["model_choice"] != before["model_choice"]:
        out["model"] = copy.deepcopy(edited.get("model"))
    for name, paths in QUESTION_FIELDS.items():
        if name == "model_choice" or answers[name] == before[name]:
            continue
        for path in paths:
            _put_path(out, path, _get_path(edited, path))
    return out


# ---------------------------------------------------------------------------------------------
# Engine field errors -> questions

_FIELD_TO_QUESTION: dict[str, str] = {
    "workload": "workload",
    "model": "model_choice",
    "model.params_b": "custom_params_b",
    "model.layers": "custom_layers",
    "model.hidden": "custom_hidden",
    "model.heads": "custom_heads",
    "model.kv_heads": "custom_kv_heads",
    "model.vocab": "custom_vocab",
    "model.moe_experts": "custom_moe_experts",
    "model.moe_top_k": "custom_moe_top_k",
    "precision": "precision",
    "sequence_length": "sequence_length",
    "gpu": "gpu",
    "gpus": "gpus",
    "gpus_per_node": "gpus_per_node",
    "training": "total_tokens_b",
    "training.total_tokens": "total_tokens_b",
    "training.global_batch_sequences": "global_batch_sequences",
    "training.global_batch_tokens": "global_batch_sequences",
    "training.sharding": "sharding",
    "inference": "replicas",
    "inference.independent_replicas": "replicas",
    "inference.concurrent_requests": "concurrent_requests",
    "inference.prompt_tokens": "prompt_tokens",
    "inference.output_tokens": "output_tokens",
    "inference.target_ms_per_token": "target_ms_per_token",
    "inference.deployment": "replicas",
    "inference.pools": "replicas",
    "inference.requests_per_s": "requests_per_s",
    "inference.target_ttft_ms": "target_ttft_ms",
    "rag": "workload",
    **{f"rag.{key}": name for name, key in RAG_ANSWERS.items()},
    "constraints.gpu_pricing": "gpu_pricing",
    "constraints.gpu_hour_usd": "gpu_hour_usd",
    "constraints.network_budget_usd": "network_budget_usd",
    "constraints.team_skills": "team_skills",
    "constraints.prefer": "prefer",
    "parallelism": "gpus",
}
# When no exact path matches: the longest known prefix decides.
_PREFIX_TO_QUESTION: tuple[tuple[str, str], ...] = (
    ("model.", "model_choice"),
    ("training.", "total_tokens_b"),
    ("inference.", "replicas"),
    ("rag.", "rag_top_k"),
    ("constraints.", "prefer"),
    ("parallelism.", "gpus"),
    ("design.", "gpus"),
)


def question_for_field(path: str) -> str | None:
    if path in _FIELD_TO_QUESTION:
        return _FIELD_TO_QUESTION[path]
    for prefix, question in _PREFIX_TO_QUESTION:
        if path.startswith(prefix):
            return question
    return None


def step_of_question(steps: tuple[Step, ...], name: str) -> str | None:
    for step in steps:
        if any(q.name == name for q in step.questions):
            return step.slug
    return None


def errors_by_question(
    field_errors: dict[str, list[str]], steps: tuple[Step, ...], answers: dict[str, str]
) -> dict[str, list[str]]:
    """Engine errors filed under the question that caused them ("" for ones we cannot place)."""
    out: dict[str, list[str]] = {}
    for path, messages in field_errors.items():
        name = question_for_field(path)
        if name is not None:
            question = next((q for s in steps for q in s.questions if q.name == name), None)
            if question is None or not is_asked(question, answers):
                name = None
        key = name or ""
        for message in messages:
            text = message if name else f"{path}: {message}"
            out.setdefault(key, []).append(text)
    return out


def first_step_with_errors(errors: dict[str, list[str]], steps: tuple[Step, ...]) -> str:
    order = step_slugs(steps)
    found = [step_of_question(steps, name) for name in errors if name]
    indices = [order.index(s) for s in found if s]
    return order[min(indices)] if indices else "review"


AnswerCheck = Callable[[dict[str, str]], dict[str, list[str]]]


def summary(steps: tuple[Step, ...], answers: Mapping[str, str]) -> list[dict[str, Any]]:
    """The review page: each step's asked questions with the answer in words."""
    answers = Answers.of(answers)
    out = []
    for step in steps:
        if step.slug == "review":
            continue
        rows = []
        for question in step.questions:
            if not is_asked(question, answers):
                continue
            raw = answers[question.name]
            shown = raw
            if question.choices:
                shown = next((c.label for c in question.choices if c.value == raw), raw)
            if not raw:
                shown = (
                    question.placeholder if question.placeholder.startswith("no ") else "default"
                )
            elif question.unit:
                shown = f"{raw} {question.unit}"
            rows.append({"label": question.label, "value": shown, "name": question.name})
        out.append({"slug": step.slug, "title": step.title, "rows": rows})
    return out
