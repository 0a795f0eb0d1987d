"""The works this project implements or re-runs, as references a reader can follow.

The five source documents (`SOURCE_DOCUMENTS`: the theses and the report draft whose tables the experiments re-run)
are named by author and year ("Reiml 2023") or by the paper's short name ("TSDAE"), with title and author as each
document gives them; published works carry their venue and a URL.
Settings cite a place in one of these with `sentsweep.settings.cited`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

NO_AUTHOR = "no author given"


@dataclass(frozen=True)
class Reference:
    """A work: `label` is how protocol cards, `sentsweep list` and docstrings name it ("Reiml 2023", "TSDAE");
    `str()` is the full citation, `bibtex()` its BibTeX entry.

    Examples:
        >>> simcse = sentsweep.Reference("SimCSE", "Tianyu Gao, Xingcheng Yao, Danqi Chen",
        ...                              "SimCSE: Simple Contrastive Learning of Sentence Embeddings", 2021,
        ...                              "EMNLP 2021", "https://arxiv.org/abs/2104.08821")
        >>> simcse.label, simcse.bibtex().splitlines()[0]
        ('SimCSE', '@inproceedings{gao2021simcse,')
    """

    label: str
    authors: str
    title: str
    year: int | None
    venue: str
    url: str = ""

    def __str__(self) -> str:
        year = f" ({self.year})" if self.year else ""
        url = f" {self.url}" if self.url else ""
        return f"{self.authors}{year}. {self.title}. {self.venue}.{url}"

    def bibtex(self) -> str:
        """This work as a BibTeX entry, keyed by first author's surname, year and first word of the title (not
        counting an article).

        The entry type follows the venue: a thesis or degree project (`school`), an unpublished draft (no year),
        arXiv, a journal (venue ending in "volume(issue)"), else conference proceedings (`booktitle`).
        """
        kind, _, school = self.venue.partition(", ")
        if kind in ("Master's thesis", "Degree project"):
            entry, venue = "mastersthesis", {"school": school, "type": kind}
        elif self.year is None:
            entry, venue = "unpublished", {"note": self.venue}
        elif self.venue == "arXiv":
            entry, venue = "misc", {"howpublished": self.venue}
        elif re.search(r"\d\(\d+\)$", self.venue):
            entry, venue = "article", {"journal": self.venue}
        else:
            entry, venue = "inproceedings", {"booktitle": self.venue}
        names = [] if self.authors == NO_AUTHOR else self.authors.replace(" et al.", ", others").split(", ")
        surname = names[0].split()[-1] if names else "anonymous"
        word = next(word for word in self.title.split() if word.lower() not in ("a", "an", "the"))
        key = unicodedata.normalize("NFKD", f"{surname}{self.year or ''}{word}")
        key = re.sub(r"[^a-z0-9]", "", key.encode("ascii", "ignore").decode().lower())
        fields = {"author": " and ".join(names), "title": "{" + self.title + "}", **venue,
                  "year": str(self.year or ""), "url": self.url}
        lines = [f"  {name} = {{{value}}}," for name, value in fields.items() if value]
        return "\n".join([f"@{entry}{{{key},", *lines, "}"])


class Cited:
    """A class that implements a published method: `reference` is the work, `citation` its BibTeX entry (as the
    `citation` of sentence-transformers' losses, which model cards collect)."""

    reference: Reference

    @property
    def citation(self) -> str:
        return self.reference.bibtex()


# The source documents.
THESIS_REIML_2023 = Reference(
    "Reiml 2023", "Johanna Reiml", "Sentence Embeddings in Various Supervision Settings", 2023,
    "Master's thesis, Ludwig-Maximilians-Universität München")
THESIS_WANG_2022 = Reference(
    "Wang 2022", "Ruixiang Wang", "Improving Unsupervised Contrastive Learning for Sentence Embeddings", 2022,
    "Master's thesis, RWTH Aachen University")
TSDAE = Reference(
    "TSDAE", "Kexin Wang, Nils Reimers, Iryna Gurevych",
    "TSDAE: Using Transformer-based Sequential Denoising Auto-Encoder for Unsupervised Sentence Embedding "
    "Learning", 2021, "Findings of EMNLP 2021", "https://arxiv.org/abs/2104.06979")
THESIS_MALMBERG_2021 = Reference(
    "Malmberg 2021", "Jacob Malmberg", "Evaluating semantic similarity using sentence embeddings", 2021,
    "Degree project, School of Electrical Engineering and Computer Science, Stockholm (TRITA-EECS-EX-2021:48)")
REPORT_TSDAE_GPL = Reference(
    "TSDAE+GPL draft", NO_AUTHOR, "untitled report draft on TSDAE and GPL domain adaptation", None,
    "unpublished draft")
SOURCE_DOCUMENTS = (THESIS_REIML_2023, THESIS_WANG_2022, TSDAE, THESIS_MALMBERG_2021, REPORT_TSDAE_GPL)

# Published methods and data sets.
SBERT = Reference(
    "SBERT", "Nils Reimers, Iryna Gurevych", "Sentence-BERT: Sentence Embeddings using Siamese BERT-Networks",
    2019, "EMNLP-IJCNLP 2019", "https://arxiv.org/abs/1908.10084")
SIMCSE = Reference(
    "SimCSE", "Tianyu Gao, Xingcheng Yao, Danqi Chen", "SimCSE: Simple Contrastive Learning of Sentence Embeddings",
    2021, "EMNLP 2021", "https://arxiv.org/abs/2104.08821")
CONSERT = Reference(
    "ConSERT", "Yuanmeng Yan, Rumei Li, Sirui Wang, Fuzheng Zhang, Wei Wu, Weiran Xu",
    "ConSERT: A Contrastive Framework for Self-Supervised Sentence Representation Transfer", 2021, "ACL 2021",
    "https://arxiv.org/abs/2105.11741")
CONTRASTIVE_TENSION = Reference(
    "CT", "Fredrik Carlsson, Amaru Cuba Gyllensten, Evangelia Gogoulou, Erik Ylipää Hellqvist, Magnus Sahlgren",
    "Semantic Re-tuning with Contrastive Tension", 2021, "ICLR 2021", "https://openreview.net/forum?id=Ov_sMNau-PF")
BERT = Reference(
    "BERT", "Jacob Devlin, Ming-Wei Chang, Kenton Lee, Kristina Toutanova",
    "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding", 2019, "NAACL 2019",
    "https://arxiv.org/abs/1810.04805")
AUGMENTED_SBERT = Reference(
    "AugSBERT", "Nandan Thakur, Nils Reimers, Johannes Daxenberger, Iryna Gurevych",
    "Augmented SBERT: Data Augmentation Method for Improving Bi-Encoders for Pairwise Sentence Scoring Tasks",
    2021, "NAACL 2021", "https://arxiv.org/abs/2010.08240")
GPL = Reference(
    "GPL", "Kexin Wang, Nandan Thakur, Nils Reimers, Iryna Gurevych",
    "GPL: Generative Pseudo Labeling for Unsupervised Domain Adaptation of Dense Retrieval", 2022, "NAACL 2022",
    "https://arxiv.org/abs/2112.07577")
MARGIN_MSE = Reference(
    "MarginMSE", "Sebastian Hofstätter, Sophia Althammer, Michael Schröder, Mete Sertkan, Allan Hanbury",
    "Improving Efficient Neural Ranking Models with Cross-Architecture Knowledge Distillation", 2020, "arXiv",
    "https://arxiv.org/abs/2010.02666")
BM25 = Reference(
    "BM25", "Stephen Robertson, Hugo Zaragoza", "The Probabilistic Relevance Framework: BM25 and Beyond", 2009,
    "Foundations and Trends in Information Retrieval 3(4)", "https://doi.org/10.1561/1500000019")
STS_BENCHMARK = Reference(
    "STS-B", "Daniel Cer, Mona Diab, Eneko Agirre, Iñigo Lopez-Gazpio, Lucia Specia",
    "SemEval-2017 Task 1: Semantic Textual Similarity Multilingual and Crosslingual Focused Evaluation", 2017,
    "SemEval 2017", "https://arxiv.org/abs/1708.00055")
SICK = Reference(
    "SICK", "Marco Marelli, Stefano Menini, Marco Baroni, Luisa Bentivogli, Raffaella Bernardi, Roberto Zamparelli",
    "A SICK cure for the evaluation of compositional distributional semantic models", 2014, "LREC 2014",
    "http://www.lrec-conf.org/proceedings/lrec2014/pdf/363_Paper.pdf")
SEMEVAL_STS = Reference(
    "STS12-16", "Eneko Agirre et al.", "SemEval Semantic Textual Similarity tasks 2012-2016", 2012,
    "SemEval 2012-2016 (*SEM 2013)", "https://aclanthology.org/S12-1051/")
SENTEVAL = Reference(
    "SentEval", "Alexis Conneau, Douwe Kiela", "SentEval: An Evaluation Toolkit for Universal Sentence "
    "Representations", 2018, "LREC 2018", "https://arxiv.org/abs/1803.05449")
USEB = Reference(
    "USEB", TSDAE.authors, "USEB, the evaluation benchmark of " + TSDAE.title, 2021, TSDAE.venue,
    "https://github.com/UKPLab/useb")
ASKUBUNTU = Reference(
    "AskUbuntu", "Tao Lei, Hrishikesh Joshi, Regina Barzilay, Tommi Jaakkola, Kateryna Tymoshenko, Alessandro "
    "Moschitti, Lluís Màrquez", "Semi-supervised Question Retrieval with Gated Convolutions", 2016, "NAACL 2016",
    "https://arxiv.org/abs/1512.05726")
CQADUPSTACK = Reference(
    "CQADupStack", "Doris Hoogeveen, Karin M. Verspoor, Timothy Baldwin",
    "CQADupStack: A Benchmark Data Set for Community Question-Answering Research", 2015, "ADCS 2015",
    "https://doi.org/10.1145/2838931.2838934")
TWITTER_PARA = Reference(
    "TwitterPara", "Wei Xu, Chris Callison-Burch, Bill Dolan",
    "SemEval-2015 Task 1: Paraphrase and Semantic Similarity in Twitter (PIT)", 2015, "SemEval 2015",
    "https://aclanthology.org/S15-2001/")
SCIDOCS = Reference(
    "SciDocs", "Arman Cohan, Sergey Feldman, Iz Beltagy, Doug Downey, Daniel S. Weld",
    "SPECTER: Document-level Representation Learning using Citation-informed Transformers", 2020, "ACL 2020",
    "https://arxiv.org/abs/2004.07180")
BEIR = Reference(
    "BEIR", "Nandan Thakur, Nils Reimers, Andreas Rücklé, Abhishek Srivastava, Iryna Gurevych",
    "BEIR: A Heterogenous Benchmark for Zero-shot Evaluation of Information Retrieval Models", 2021,
    "NeurIPS 2021 Datasets and Benchmarks", "https://arxiv.org/abs/2104.08663")
SQUAD = Reference(
    "SQuAD", "Pranav Rajpurkar, Jian Zhang, Konstantin Lopyrev, Percy Liang",
    "SQuAD: 100,000+ Questions for Machine Comprehension of Text", 2016, "EMNLP 2016",
    "https://arxiv.org/abs/1606.05250")
MTEB = Reference(
    "MTEB", "Niklas Muennighoff, Nouamane Tazi, Loïc Magne, Nils Reimers",
    "MTEB: Massive Text Embedding Benchmark", 2023, "EACL 2023", "https://arxiv.org/abs/2210.07316")
