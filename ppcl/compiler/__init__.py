"""compiler"""
