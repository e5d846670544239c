"""The numbers: Bradley-Terry rankings, accuracy, agreement, corrected estimates, audit sampling, and the readers from a workspace."""
