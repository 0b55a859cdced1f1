"""Layers: attention (scaled dot-product, multi-head, Bahdanau, Luong), positions, embeddings,
feed-forward, token dropout, encoder/decoder blocks and stacks, RNN parts."""

from tfm.layers.attention import Attention
from tfm.layers.attention_score import AttentionScore
from tfm.layers.bahdanau_attention import BahdanauAttention
from tfm.layers.decoder import Decoder
from tfm.layers.decoder_layer import DecoderLayer
from tfm.layers.encoder import Encoder
from tfm.layers.encoder_layer import EncoderLayer
from tfm.layers.feed_forward import FeedForward
from tfm.layers.luong_attention import LuongAttention
from tfm.layers.multi_head_attention import MultiHeadAttention
from tfm.layers.positional_encoding import PositionalEmbedding, PositionalEncoding, positional_encoding
from tfm.layers.rnn_decoder import RNNDecoder
from tfm.layers.rnn_encoder import RNNEncoder
from tfm.layers.scaled_dot_product_attention import (
    attention_weights,
    masked_softmax,
    scaled_dot_product_attention,
)
from tfm.layers.token_dropout import TokenDropout
from tfm.layers.token_embedding import TokenEmbedding

__all__ = ["Attention", "AttentionScore", "BahdanauAttention", "Decoder", "DecoderLayer", "Encoder", "EncoderLayer",
           "FeedForward", "LuongAttention", "MultiHeadAttention", "PositionalEmbedding", "PositionalEncoding",
           "RNNDecoder", "RNNEncoder", "TokenDropout", "TokenEmbedding", "attention_weights", "masked_softmax",
           "positional_encoding", "scaled_dot_product_attention"]
