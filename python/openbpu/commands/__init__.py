# SPDX-License-Identifier: Apache-2.0
"""Command-line entry points (installed as <prefix>/bin/<name>)."""
