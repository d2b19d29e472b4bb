"""Agents: one package per algorithm, each exposing a builder."""
